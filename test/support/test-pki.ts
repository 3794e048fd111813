import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A throwaway PKI made with the openssl CLI at test time: a CA, a server
 * certificate for 127.0.0.1, and client certificates carrying a SPIFFE URI
 * SAN. Nothing is committed; every run has its own keys.
 */

export interface Pki {
  dir: string;
  caCert: string;
  serverCert: string;
  serverKey: string;
  /** A client certificate and key (file paths), signed by `ca` (a CA made by newCa). */
  client(ca: Ca, uriSan: string): { cert: string; key: string };
}

export interface Ca {
  cert: string;
  key: string;
}

function openssl(args: string[]): void {
  execFileSync("openssl", args, { stdio: ["ignore", "ignore", "pipe"] });
}

export function newCa(dir: string, name: string): Ca {
  const cert = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", `/CN=${name}`]);
  return { cert, key };
}

function issue(dir: string, ca: Ca, name: string, extensions: string): { cert: string; key: string } {
  const key = join(dir, `${name}.key`);
  const csr = join(dir, `${name}.csr`);
  const cert = join(dir, `${name}.crt`);
  const ext = join(dir, `${name}.ext`);
  writeFileSync(ext, extensions);
  openssl(["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", csr, "-subj", `/CN=${name}`]);
  openssl(["x509", "-req", "-in", csr, "-CA", ca.cert, "-CAkey", ca.key, "-CAcreateserial", "-out", cert, "-days", "1", "-extfile", ext]);
  return { cert, key };
}

export function newPki(): Pki & { ca: Ca } {
  const dir = mkdtempSync(join(tmpdir(), "recall-pki-"));
  const ca = newCa(dir, "test-ca");
  const server = issue(dir, ca, "server", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n");
  let n = 0;
  return {
    dir,
    ca,
    caCert: ca.cert,
    serverCert: server.cert,
    serverKey: server.key,
    client: (signer, uriSan) => issue(dir, signer, `client-${n++}`, `subjectAltName=URI:${uriSan}\nextendedKeyUsage=clientAuth\n`),
  };
}

export const read = (path: string): Buffer => readFileSync(path);
