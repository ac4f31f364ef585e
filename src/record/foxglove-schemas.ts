/**
 * The Foxglove well-known schemas bodylink publishes (foxglove/schemas: `foxglove.FrameTransforms`,
 * `foxglove.SceneUpdate`), as JSON Schemas the viewers parse: Foxglove and Lichtblick pick their 3D
 * panel's converters by the schema's name; Lichtblick's parser also needs one `type` per property
 * (viewer-schema.ts), so the enums Foxglove's own JSON Schemas write as `oneOf` of constants
 * (LinePrimitive.type) are `integer` with `enum` here. Only the fields bodylink fills are listed
 * with their full shape; the messages carry every field the viewers read (viewer-3d.ts).
 *
 * Module-load only.
 */

const vector3 = (description: string) =>
  ({
    type: "object",
    description,
    properties: { x: { type: "number" }, y: { type: "number" }, z: { type: "number" } },
  }) as const;
const quaternion = {
  type: "object",
  description: "Rotation as a unit quaternion",
  properties: { x: { type: "number" }, y: { type: "number" }, z: { type: "number" }, w: { type: "number" } },
} as const;
const time = (description: string) =>
  ({
    type: "object",
    description,
    properties: { sec: { type: "integer", minimum: 0 }, nsec: { type: "integer", minimum: 0, maximum: 999_999_999 } },
  }) as const;
const pose = { type: "object", description: "Position and orientation in the entity's frame", properties: { position: vector3("Position, m"), orientation: quaternion } } as const;
const color = {
  type: "object",
  description: "RGBA, each 0..1",
  properties: { r: { type: "number" }, g: { type: "number" }, b: { type: "number" }, a: { type: "number" } },
} as const;
const sized = (what: string) => ({ type: "object", description: what, properties: { pose, size: vector3("Size along each axis, m"), color } }) as const;
const cylinder = {
  type: "object",
  description: "A cylinder (or cone) along the pose's z axis",
  properties: { pose, size: vector3("Bounding size, m"), bottom_scale: { type: "number" }, top_scale: { type: "number" }, color },
} as const;
const line = {
  type: "object",
  description: "Line segments",
  properties: {
    type: { type: "integer", enum: [0, 1, 2], description: "0 LINE_STRIP, 1 LINE_LIST, 2 LINE_LOOP" },
    pose,
    thickness: { type: "number", description: "Width, m (or px when scale_invariant)" },
    scale_invariant: { type: "boolean" },
    points: { type: "array", items: vector3("A point, m") },
    color,
    colors: { type: "array", items: color },
    indices: { type: "array", items: { type: "integer" } },
  },
} as const;
const arrow = {
  type: "object",
  description: "An arrow along the pose's x axis",
  properties: { pose, shaft_length: { type: "number" }, shaft_diameter: { type: "number" }, head_length: { type: "number" }, head_diameter: { type: "number" }, color },
} as const;
const text = {
  type: "object",
  description: "A text label",
  properties: { pose, billboard: { type: "boolean" }, font_size: { type: "number" }, scale_invariant: { type: "boolean" }, color, text: { type: "string" } },
} as const;
const empty = (what: string) => ({ type: "array", description: `${what} (none from bodylink)`, items: { type: "object", properties: {} } }) as const;

export const FRAME_TRANSFORMS_SCHEMA_NAME = "foxglove.FrameTransforms";
export const LOG_SCHEMA_NAME = "foxglove.Log";
export const SCENE_UPDATE_SCHEMA_NAME = "foxglove.SceneUpdate";

export const FRAME_TRANSFORMS_SCHEMA = {
  title: FRAME_TRANSFORMS_SCHEMA_NAME,
  description: "Every link's pose relative to its parent link, from the body's kinematics",
  type: "object",
  properties: {
    transforms: {
      type: "array",
      items: {
        type: "object",
        description: "foxglove.FrameTransform: the child frame's pose in the parent frame",
        properties: {
          timestamp: time("The state's time"),
          parent_frame_id: { type: "string" },
          child_frame_id: { type: "string" },
          translation: vector3("Child origin in the parent frame, m"),
          rotation: quaternion,
        },
      },
    },
  },
} as const;

export const SCENE_UPDATE_SCHEMA = {
  title: SCENE_UPDATE_SCHEMA_NAME,
  description: "The body's shapes, each attached to a link frame (frame_locked: they move with the transforms)",
  type: "object",
  properties: {
    deletions: {
      type: "array",
      description: "Entities to delete (none from bodylink: each update replaces its entities by id)",
      items: { type: "object", properties: { timestamp: time("Delete what is older"), type: { type: "integer", enum: [0, 1], description: "0 MATCHING_ID, 1 ALL" }, id: { type: "string" } } },
    },
    entities: {
      type: "array",
      items: {
        type: "object",
        description: "foxglove.SceneEntity",
        properties: {
          timestamp: time("When it was published"),
          frame_id: { type: "string" },
          id: { type: "string" },
          lifetime: time("0: until replaced"),
          frame_locked: { type: "boolean" },
          metadata: { type: "array", items: { type: "object", properties: { key: { type: "string" }, value: { type: "string" } } } },
          arrows: { type: "array", items: arrow },
          cubes: { type: "array", items: sized("A box") },
          spheres: { type: "array", items: sized("A sphere (ellipsoid)") },
          cylinders: { type: "array", items: cylinder },
          lines: { type: "array", items: line },
          triangles: empty("Triangle lists"),
          texts: { type: "array", items: text },
          models: empty("Models"),
        },
      },
    },
  },
} as const;

export const LOG_SCHEMA = {
  title: LOG_SCHEMA_NAME,
  description: "A runtime event (/events) as a log line",
  type: "object",
  properties: {
    timestamp: time("When it happened"),
    level: { type: "integer", enum: [0, 1, 2, 3, 4, 5], description: "0 UNKNOWN, 1 DEBUG, 2 INFO, 3 WARNING, 4 ERROR, 5 FATAL" },
    message: { type: "string", description: "The event's text" },
    name: { type: "string", description: "The event's type (estop, lease_acquired, link, …)" },
    file: { type: "string", description: "Always empty" },
    line: { type: "integer", description: "The cycle (seq) when the event was seen, or 0" },
  },
} as const;
