/**
 * gRPC status codes and the two conversions grpc-go applies when a server
 * does not answer with a gRPC status: from a non-200 HTTP status
 * (HTTPStatusConvTab) and from an RST_STREAM error code (http2ErrConvTab).
 */

/** Names as grpc-go's codes.Code String() prints them. */
const codeNames = [
  'OK', 'Canceled', 'Unknown', 'InvalidArgument', 'DeadlineExceeded', 'NotFound', 'AlreadyExists', 'PermissionDenied',
  'ResourceExhausted', 'FailedPrecondition', 'Aborted', 'OutOfRange', 'Unimplemented', 'Internal', 'Unavailable', 'DataLoss', 'Unauthenticated',
] as const;

export const grpcCode = {
  ok: 0, canceled: 1, unknown: 2, deadlineExceeded: 4, permissionDenied: 7, resourceExhausted: 8,
  unimplemented: 12, internal: 13, unavailable: 14, unauthenticated: 16,
} as const;

/** A non-OK gRPC status: what grpc-go's status error carries. */
export interface RpcError {
  readonly code: number;
  readonly message: string;
}

export function codeName(code: number): string {
  return codeNames[code] ?? `Code(${code})`;
}

/** grpc-go's `%+v` of a status error. */
export function describeRpcError(err: RpcError): string {
  return `rpc error: code = ${codeName(err.code)} desc = ${err.message}`;
}

const httpStatusCodes: Readonly<Record<number, number>> = {
  400: grpcCode.internal,
  401: grpcCode.unauthenticated,
  403: grpcCode.permissionDenied,
  404: grpcCode.unimplemented,
  429: grpcCode.unavailable,
  502: grpcCode.unavailable,
  503: grpcCode.unavailable,
  504: grpcCode.unavailable,
};

/** The code for a response whose HTTP status is not 200 (Unknown when unlisted, including 200 itself). */
export function codeForHttpStatus(status: number): number {
  return httpStatusCodes[status] ?? grpcCode.unknown;
}

/** HTTP/2 error codes 0x0–0xd with the names Go's http2.ErrCode prints and the gRPC code grpc-go maps them to. */
const http2Errors: readonly (readonly [string, number])[] = [
  ['NO_ERROR', grpcCode.internal],
  ['PROTOCOL_ERROR', grpcCode.internal],
  ['INTERNAL_ERROR', grpcCode.internal],
  ['FLOW_CONTROL_ERROR', grpcCode.resourceExhausted],
  ['SETTINGS_TIMEOUT', grpcCode.internal],
  ['STREAM_CLOSED', grpcCode.internal],
  ['FRAME_SIZE_ERROR', grpcCode.internal],
  ['REFUSED_STREAM', grpcCode.unavailable],
  ['CANCEL', grpcCode.canceled],
  ['COMPRESSION_ERROR', grpcCode.internal],
  ['CONNECT_ERROR', grpcCode.internal],
  ['ENHANCE_YOUR_CALM', grpcCode.resourceExhausted],
  ['INADEQUATE_SECURITY', grpcCode.permissionDenied],
  ['HTTP_1_1_REQUIRED', grpcCode.internal],
];

/** Go's http2.ErrCode String(). */
export function http2CodeName(http2Code: number): string {
  return http2Errors[http2Code]?.[0] ?? `unknown error code 0x${http2Code.toString(16)}`;
}

/**
 * grpc-go's status for a stream the server reset (http2_client.go
 * handleRSTStream). A CANCEL that arrives once the call's deadline has
 * passed is read as DeadlineExceeded ("likely the cause of this
 * cancellation"): a grpc-go server resets the stream with CANCEL when the
 * grpc-timeout it was sent runs out, which is just after the client's own.
 */
export function rstStreamError(http2Code: number, pastDeadline = false): RpcError {
  const known = http2Errors[http2Code];
  const name = http2CodeName(http2Code);
  let code = known?.[1] ?? grpcCode.unknown;
  if (code === grpcCode.canceled && pastDeadline) code = grpcCode.deadlineExceeded;
  return { code, message: `stream terminated by RST_STREAM with error code: ${name}` };
}
