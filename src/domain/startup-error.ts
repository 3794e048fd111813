/**
 * The sidecar cannot start, for a reason an operator can fix: a port in use,
 * a socket directory that does not exist, a store that cannot be reached. The
 * message is one line naming the cause and the setting; the CLI prints it
 * and exits non-zero.
 */
export class StartupError extends Error {
  override readonly name = "StartupError";
}
