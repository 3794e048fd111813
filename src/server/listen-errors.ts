import { existsSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { StartupError } from "../domain/startup-error.js";

/**
 * Why a listener could not be bound, in one line naming the setting to
 * change. Node's own errors say EACCES for a socket in a missing directory
 * and carry a stack; an operator needs the cause and the variable.
 */

export function tcpListenError(error: unknown, host: string, port: number): Error {
  const code = (error as NodeJS.ErrnoException).code;
  const where = `${host}:${port}`;
  switch (code) {
    case "EADDRINUSE":
      return new StartupError(`cannot listen on ${where}: the port is already in use (RECALL_PORT=${port})`);
    case "EACCES":
      return new StartupError(`cannot listen on ${where}: permission denied for port ${port} (RECALL_PORT=${port})`);
    case "EADDRNOTAVAIL":
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return new StartupError(`cannot listen on ${where}: ${host} is not an address of this machine (RECALL_HOST=${host})`);
    default:
      return new StartupError(`cannot listen on ${where}: ${code ?? (error as Error).message} (RECALL_HOST, RECALL_PORT)`);
  }
}

export function socketListenError(error: unknown, path: string): Error {
  const code = (error as NodeJS.ErrnoException).code;
  const dir = dirname(path);
  const setting = `RECALL_SOCKET_PATH=${path}`;
  if (!existsSync(dir)) return new StartupError(`cannot listen on unix socket ${path}: the directory ${dir} does not exist (${setting})`);
  if (!statSync(dir).isDirectory()) return new StartupError(`cannot listen on unix socket ${path}: ${dir} is not a directory (${setting})`);
  switch (code) {
    case "EACCES":
    case "EPERM":
      return new StartupError(`cannot listen on unix socket ${path}: permission denied in ${dir} (${setting})`);
    case "EADDRINUSE":
      return new StartupError(`cannot listen on unix socket ${path}: the path is in use and is not a stale socket (${setting})`);
    case "ENAMETOOLONG":
    case "EINVAL":
      return new StartupError(`cannot listen on unix socket ${path}: the path is too long for a socket (${setting})`);
    default:
      return new StartupError(`cannot listen on unix socket ${path}: ${code ?? (error as Error).message} (${setting})`);
  }
}
