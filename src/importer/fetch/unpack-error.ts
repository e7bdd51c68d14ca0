/** A compressed file that cannot be unpacked, or may not be; the message does not name it (the caller names the source). */
export class UnpackError extends Error {
  override readonly name = "UnpackError";
}
