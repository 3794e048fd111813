// gRPC server reflection (grpc.reflection.v1 and v1alpha) for connect-node,
// so grpcurl and buf curl work without a local copy of the schema.
// Spec: https://github.com/grpc/grpc/blob/master/doc/server-reflection.md

import {
  create,
  createFileRegistry,
  fromBinary,
  toBinary,
  type DescFile,
  type DescService,
  type FileRegistry,
  type MessageInitShape,
} from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { Code, type ConnectRouter } from "@connectrpc/connect";
import * as v1 from "../gen/grpc/reflection/v1/reflection_pb.js";
import * as v1alpha from "../gen/grpc/reflection/v1alpha/reflection_pb.js";

type Request = v1.ServerReflectionRequest;
type Response = v1.ServerReflectionResponse;
type ResponseBody = MessageInitShape<typeof v1.ServerReflectionResponseSchema>["messageResponse"];

export function registerReflection(router: ConnectRouter, services: DescService[]): void {
  const reflectionServices = [v1.ServerReflection, v1alpha.ServerReflection];
  // The reflection services describe themselves too, like grpc-go's do.
  const index = new SchemaIndex([...services, ...reflectionServices]);
  const serviceNames = [...new Set([...services, ...reflectionServices].map((s) => s.typeName))];
  const answer = (req: Request): Response =>
    create(v1.ServerReflectionResponseSchema, {
      validHost: req.host,
      originalRequest: req,
      messageResponse: respond(index, serviceNames, req),
    });

  router.service(v1.ServerReflection, {
    async *serverReflectionInfo(requests) {
      for await (const req of requests) yield answer(req);
    },
  });

  // v1alpha is wire-identical to v1, so translate through bytes and share one
  // implementation instead of duplicating it per generated type.
  router.service(v1alpha.ServerReflection, {
    async *serverReflectionInfo(requests) {
      for await (const alphaReq of requests) {
        const req = fromBinary(
          v1.ServerReflectionRequestSchema,
          toBinary(v1alpha.ServerReflectionRequestSchema, alphaReq),
        );
        yield fromBinary(
          v1alpha.ServerReflectionResponseSchema,
          toBinary(v1.ServerReflectionResponseSchema, answer(req)),
        );
      }
    },
  });
}

function respond(index: SchemaIndex, serviceNames: string[], req: Request): ResponseBody {
  const { case: kind, value } = req.messageRequest;
  switch (kind) {
    case "listServices":
      return {
        case: "listServicesResponse",
        value: { service: serviceNames.map((name) => ({ name })) },
      };
    case "fileByFilename":
      return filesOrNotFound(index, index.fileByName(value), `file "${value}" not found`);
    case "fileContainingSymbol":
      return filesOrNotFound(index, index.fileContainingSymbol(value), `symbol "${value}" not found`);
    case "fileContainingExtension": {
      const { containingType, extensionNumber } = value;
      return filesOrNotFound(
        index,
        index.fileContainingExtension(containingType, extensionNumber),
        `extension ${extensionNumber} of type "${containingType}" not found`,
      );
    }
    case "allExtensionNumbersOfType": {
      const numbers = index.extensionNumbers(value);
      if (numbers === undefined) return notFound(`type "${value}" not found`);
      return {
        case: "allExtensionNumbersResponse",
        value: { baseTypeName: value, extensionNumber: numbers },
      };
    }
    case undefined:
      // An error response rather than a failed stream, like grpc-java.
      return {
        case: "errorResponse",
        value: { errorCode: Code.InvalidArgument, errorMessage: "no message_request set" },
      };
  }
}

function filesOrNotFound(index: SchemaIndex, file: DescFile | undefined, message: string): ResponseBody {
  if (file === undefined) return notFound(message);
  return {
    case: "fileDescriptorResponse",
    value: { fileDescriptorProto: index.serializeWithDependencies(file) },
  };
}

function notFound(message: string): ResponseBody {
  return { case: "errorResponse", value: { errorCode: Code.NotFound, errorMessage: message } };
}

/** The files behind a set of services, with symbol lookup and cached encodings. */
class SchemaIndex {
  private readonly registry: FileRegistry;
  private readonly encoded = new Map<string, Uint8Array>();

  constructor(services: DescService[]) {
    const files = withDependencies(services.map((s) => s.file));
    // Dependencies come first in `files`, as a FileDescriptorSet requires.
    this.registry = createFileRegistry(
      create(FileDescriptorSetSchema, { file: files.map((f) => f.proto) }),
    );
    for (const file of files) {
      this.encoded.set(file.proto.name, toBinary(FileDescriptorProtoSchema, file.proto));
    }
  }

  fileByName(name: string): DescFile | undefined {
    return this.registry.getFile(name);
  }

  /**
   * Messages, enums, services and extensions (nested ones too) are in the
   * registry; methods, fields, oneofs and enum values are found via their
   * parent scope.
   */
  fileContainingSymbol(symbol: string): DescFile | undefined {
    const desc = this.registry.get(symbol);
    if (desc !== undefined) return desc.file;

    const dot = symbol.lastIndexOf(".");
    if (dot < 0) return undefined;
    const scope = symbol.slice(0, dot);
    const member = symbol.slice(dot + 1);
    const hasValue = (enums: { values: { name: string }[] }[]) =>
      enums.some((e) => e.values.some((v) => v.name === member));

    const parent = this.registry.get(scope);
    switch (parent?.kind) {
      case "service":
        return parent.methods.some((m) => m.name === member) ? parent.file : undefined;
      case "message": {
        const found =
          parent.fields.some((f) => f.name === member) ||
          parent.oneofs.some((o) => o.name === member) ||
          // Enum values are scoped as siblings of their enum (C++ rules).
          hasValue(parent.nestedEnums);
        return found ? parent.file : undefined;
      }
      case undefined:
        // Values of top-level enums live in the package scope.
        for (const file of this.registry.files) {
          if (file.proto.package === scope && hasValue(file.enums)) return file;
        }
        return undefined;
      default:
        return undefined;
    }
  }

  fileContainingExtension(typeName: string, fieldNumber: number): DescFile | undefined {
    const message = this.registry.getMessage(typeName);
    if (message === undefined) return undefined;
    return this.registry.getExtensionFor(message, fieldNumber)?.file;
  }

  /** Field numbers of all known extensions of a message; undefined if the message is unknown. */
  extensionNumbers(typeName: string): number[] | undefined {
    if (this.registry.getMessage(typeName) === undefined) return undefined;
    const numbers: number[] = [];
    for (const desc of this.registry) {
      if (desc.kind === "extension" && desc.extendee.typeName === typeName) numbers.push(desc.number);
    }
    return numbers;
  }

  /** The file first, then its transitive dependencies, each exactly once. */
  serializeWithDependencies(file: DescFile): Uint8Array[] {
    return withDependencies([file], "preorder").map((f) => {
      const bytes = this.encoded.get(f.proto.name);
      if (bytes === undefined) throw new Error(`reflection: ${f.proto.name} is not indexed`);
      return bytes;
    });
  }
}

/**
 * The given files and everything they import, deduplicated by file name.
 * "postorder" puts dependencies before dependents; "preorder" puts each
 * file before its imports (the order reference servers answer in).
 */
function withDependencies(roots: DescFile[], order: "preorder" | "postorder" = "postorder"): DescFile[] {
  const seen = new Set<string>();
  const out: DescFile[] = [];
  const visit = (file: DescFile): void => {
    if (seen.has(file.proto.name)) return;
    seen.add(file.proto.name);
    if (order === "preorder") out.push(file);
    file.dependencies.forEach(visit);
    if (order === "postorder") out.push(file);
  };
  roots.forEach(visit);
  return out;
}
