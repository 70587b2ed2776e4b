/**
 * Benchmark knobs: `--name=value` flags or `BENCH_NAME` environment
 * variables (flags win), with the defaults below.
 */

export interface ProbeBenchOptions {
  readonly httpProbes: number;
  readonly tcpProbes: number;
  readonly grpcProbes: number;
  /** outprobe probes run before each measured window (not counted). */
  readonly warmup: number;
  /** `/probe` requests to blackbox before each measured window (not counted). */
  readonly blackboxWarmup: number;
  /** outprobe Scheduler concurrency bound. */
  readonly concurrency: number;
  /** Requests to blackbox in flight at once. */
  readonly blackboxConcurrency: number;
  /** Scheduler period of every target in the fixed-count runs. */
  readonly periodMs: number;
  readonly timeoutMs: number;
  readonly httpPorts: number;
  readonly tcpPorts: number;
  readonly grpcPorts: number;
  /** Target processes; the ports are split between them. */
  readonly targetProcs: number;
  /** Loopback addresses 127.0.0.2 .. 127.0.0.(1+n) the ports are spread over. */
  readonly ips: number;
  readonly blackbox: boolean;
  /** Run the kernel's TCP floor (raw connect + reset, floor.ts) as a phase beside outprobe's TCP. */
  readonly floor: boolean;
  /** Run Cloudprober (built from tools/cloudprober on first use). */
  readonly cloudprober: boolean;
  /** Cloudprober's setup per kind: probe definitions over all the ports, and their interval. */
  readonly cloudproberHttpCopies: number;
  readonly cloudproberHttpIntervalMs: number;
  readonly cloudproberTcpCopies: number;
  readonly cloudproberTcpIntervalMs: number;
  readonly cloudproberGrpcCopies: number;
  readonly cloudproberGrpcIntervalMs: number;
  /** Cloudprober's measured window, in stats-export intervals (10 s each up to a 10 s probe interval). */
  readonly cloudproberExports: number;
  /** `--cloudprober-sweep=i1:c1,i2:c2,...`: only Cloudprober, at each interval:copies, to find its best setup. */
  readonly cloudproberSweep: readonly (readonly [number, number])[];
  /** Repeat every phase this many times; figures pool all rounds. */
  readonly rounds: number;
}

export interface MemoryBenchOptions {
  readonly targets: number;
  readonly periodMs: number;
  readonly periods: number;
  readonly concurrency: number;
  readonly timeoutMs: number;
  /** Share of targets per protocol, e.g. "48,48,4" for http,tcp,grpc. */
  readonly mix: readonly [number, number, number];
  readonly httpPorts: number;
  readonly tcpPorts: number;
  readonly grpcPorts: number;
  readonly targetProcs: number;
  readonly ips: number;
}

function raw(name: string, argv: readonly string[]): string | undefined {
  const flag = argv.find((arg) => arg === `--${name}` || arg.startsWith(`--${name}=`));
  if (flag !== undefined) return flag.includes('=') ? flag.slice(flag.indexOf('=') + 1) : 'true';
  return process.env[`BENCH_${name.toUpperCase().replaceAll('-', '_')}`];
}

function int(name: string, fallback: number, argv: readonly string[]): number {
  const value = raw(name, argv);
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) throw new Error(`--${name} must be a non-negative integer, got ${JSON.stringify(value)}`);
  return parsed;
}

function bool(name: string, fallback: boolean, argv: readonly string[]): boolean {
  const value = raw(name, argv);
  if (value === undefined) return fallback;
  return !['0', 'false', 'no', 'off'].includes(value.toLowerCase());
}

function sweep(value: string | undefined): [number, number][] {
  if (value === undefined || value === '' || value === 'false') return [];
  return value.split(',').map((pair) => {
    const [interval, copies] = pair.split(':').map(Number);
    if (!Number.isInteger(interval) || !Number.isInteger(copies) || interval! < 1 || copies! < 1) throw new Error(`--cloudprober-sweep wants interval_ms:copies,..., got ${JSON.stringify(pair)}`);
    return [interval!, copies!];
  });
}

export function probeBenchOptions(argv: readonly string[]): ProbeBenchOptions {
  return {
    httpProbes: int('http', 20_000, argv),
    tcpProbes: int('tcp', 20_000, argv),
    grpcProbes: int('grpc', 5_000, argv),
    warmup: int('warmup', 20_000, argv),
    blackboxWarmup: int('blackbox-warmup', 2_000, argv),
    concurrency: int('concurrency', 64, argv),
    blackboxConcurrency: int('blackbox-concurrency', 32, argv),
    periodMs: int('period-ms', 0, argv),
    timeoutMs: int('timeout-ms', 1_000, argv),
    httpPorts: int('http-ports', 500, argv),
    tcpPorts: int('tcp-ports', 500, argv),
    grpcPorts: int('grpc-ports', 100, argv),
    targetProcs: Math.max(1, int('target-procs', 2, argv)),
    ips: Math.min(250, Math.max(1, int('ips', 10, argv))),
    blackbox: bool('blackbox', true, argv),
    floor: bool('floor', true, argv),
    cloudprober: bool('cloudprober', true, argv),
    cloudproberHttpCopies: Math.max(1, int('cloudprober-http-copies', 4, argv)),
    cloudproberHttpIntervalMs: Math.max(1, int('cloudprober-http-interval-ms', 1000, argv)),
    cloudproberTcpCopies: Math.max(1, int('cloudprober-tcp-copies', 20, argv)),
    cloudproberTcpIntervalMs: Math.max(1, int('cloudprober-tcp-interval-ms', 1000, argv)),
    cloudproberGrpcCopies: Math.max(1, int('cloudprober-grpc-copies', 10, argv)),
    cloudproberGrpcIntervalMs: Math.max(1, int('cloudprober-grpc-interval-ms', 1000, argv)),
    cloudproberExports: Math.max(1, int('cloudprober-exports', 2, argv)),
    cloudproberSweep: sweep(raw('cloudprober-sweep', argv)),
    rounds: Math.max(1, int('rounds', 1, argv)),
  };
}

export function memoryBenchOptions(argv: readonly string[]): MemoryBenchOptions {
  const mix = (raw('mix', argv) ?? '48,48,4').split(',').map(Number);
  if (mix.length !== 3 || mix.some((n) => !Number.isFinite(n) || n < 0)) throw new Error('--mix must be three numbers, e.g. 48,48,4');
  return {
    targets: int('targets', 50_000, argv),
    periodMs: int('period-ms', 10_000, argv),
    periods: Math.max(1, int('periods', 1, argv)),
    concurrency: int('concurrency', 256, argv),
    timeoutMs: int('timeout-ms', 1_000, argv),
    mix: [mix[0]!, mix[1]!, mix[2]!],
    httpPorts: int('http-ports', 500, argv),
    tcpPorts: int('tcp-ports', 500, argv),
    grpcPorts: int('grpc-ports', 100, argv),
    targetProcs: Math.max(1, int('target-procs', 2, argv)),
    ips: Math.min(250, Math.max(1, int('ips', 10, argv))),
  };
}

/** 127.0.0.2, 127.0.0.3, ...: loopback addresses other tests are unlikely to use. */
export function loopbackIps(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `127.0.0.${String(i + 2)}`);
}
