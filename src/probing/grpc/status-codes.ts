/** gRPC status code names as grpc-go's codes.Code String() prints them. */
export const grpcCodeNames = [
  'OK', 'Canceled', 'Unknown', 'InvalidArgument', 'DeadlineExceeded', 'NotFound', 'AlreadyExists', 'PermissionDenied',
  'ResourceExhausted', 'FailedPrecondition', 'Aborted', 'OutOfRange', 'Unimplemented', 'Internal', 'Unavailable', 'DataLoss', 'Unauthenticated',
] as const;

export const grpcCode = { ok: 0, deadlineExceeded: 4, unimplemented: 12, internal: 13, unknown: 2 } as const;

export function codeName(code: number): string {
  return grpcCodeNames[code] ?? `Code(${code})`;
}

/** grpc-go's mapping of a non-gRPC HTTP status to a code (http_util.go). */
export function codeForHttpStatus(status: number): number {
  switch (status) {
    case 400:
      return 13;
    case 401:
      return 16;
    case 403:
      return 7;
    case 404:
      return 12;
    case 429:
    case 502:
    case 503:
    case 504:
      return 14;
    default:
      return 2;
  }
}
