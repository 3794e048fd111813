import { MemoryFS, PGlite } from "@electric-sql/pglite";
import { tarFiles } from "./tar-entries.js";

/** The part of Emscripten's file system and module this module uses. */
interface EmscriptenModule {
  FS: {
    mkdirTree(path: string): void;
    writeFile(path: string, data: Uint8Array, options: { canOwn: boolean }): void;
  };
}
/** Where PGlite keeps its data directory in its file system (PGlite.paths, not in its types). */
const PGDATA = (PGlite as unknown as { paths: { PGDATA: string } }).paths.PGDATA;

type ModuleOptions = { preRun?: ((module: EmscriptenModule) => void)[] } & Record<string, unknown>;

/**
 * PGlite's in-memory file system, its data directory laid out from a
 * template before PostgreSQL starts, each file a view of the template's
 * bytes rather than a copy. PGlite's own loader (`loadDataDir`) copies every
 * file of the tarball into a buffer of its own, from the allocator: the
 * template's 10 MB went to glibc's arenas beside the start's garbage, and an
 * idle ephemeral sidecar held 10 MiB more (docs/adr/0026). Here the template
 * is read once, into memory V8 maps itself (store/ephemeral-start.ts), and
 * the database's files are that memory, written in place; a file PostgreSQL
 * writes past its end moves to a buffer of its own, as any in-memory file
 * does. The tarball's bytes must be this file system's alone.
 */
export class TemplateFs extends MemoryFS {
  constructor(private readonly tar: Uint8Array) {
    super();
  }

  override async init(pg: PGlite, options: ModuleOptions): Promise<{ emscriptenOpts: ModuleOptions }> {
    const { emscriptenOpts } = (await super.init(pg, options)) as { emscriptenOpts: ModuleOptions };
    const layOut = (module: EmscriptenModule) => {
      for (const { name, folder, data } of tarFiles(this.tar)) {
        const path = `${PGDATA}/${name.replace(/^\/|\/$/g, "")}`;
        module.FS.mkdirTree(folder ? path : path.slice(0, path.lastIndexOf("/")));
        if (!folder) module.FS.writeFile(path, data, { canOwn: true });
      }
    };
    return { emscriptenOpts: { ...emscriptenOpts, preRun: [...(emscriptenOpts.preRun ?? []), layOut] } };
  }
}
