import { create } from "@bufbuild/protobuf";
import { Sensitivity, SurfaceSchema, type Surface } from "../gen/memory/v1/types_pb.js";

/** The viewing surface of every read the page makes: its ceiling bounds what is shown (UNSPECIFIED: the server's default). */
export type Ceiling = Sensitivity;

export function viewingSurface(ceiling: Ceiling): Surface {
  return create(SurfaceSchema, { surfaceId: "inspector", sensitivityCeiling: ceiling });
}
