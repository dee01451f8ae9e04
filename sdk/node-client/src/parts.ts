import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { type Message, MessageSchema, type Part, PartSchema, Role } from "./gen/agentcore/v1/message_pb";

/** PartInit is a part as a plain object, or a Part made with create(PartSchema, …). */
export type PartInit = MessageInitShape<typeof PartSchema>;

/** MessageInit is a message as a plain object, or a Message made with create(MessageSchema, …). */
export type MessageInit = MessageInitShape<typeof MessageSchema>;

/** Input is what a send takes: text, or parts (text, images, audio, video, files). */
export type Input = string | PartInit[];

/** text is a text part. */
export function text(t: string): Part {
  return create(PartSchema, { kind: { case: "text", value: t } });
}

/** A file's content: its bytes, or a URL (http(s) or data:) the server fetches. */
export type Source = Uint8Array | string;

function filePart(kind: "image" | "file" | "audio" | "video", mediaType: string, src: Source, filename = ""): Part {
  const source =
    typeof src === "string" ? { case: "url" as const, value: src } : { case: "data" as const, value: src };
  return create(PartSchema, { kind: { case: kind, value: { mediaType, source, filename } } });
}

/** image is an image part: bytes or a URL, e.g. image("image/png", png). */
export function image(mediaType: string, src: Source): Part {
  return filePart("image", mediaType, src);
}

/** file is a file part (a PDF, a text file…), with its name when it has one. */
export function file(mediaType: string, src: Source, filename = ""): Part {
  return filePart("file", mediaType, src, filename);
}

/** audio is an audio part. */
export function audio(mediaType: string, src: Source): Part {
  return filePart("audio", mediaType, src);
}

/** video is a video part. */
export function video(mediaType: string, src: Source): Part {
  return filePart("video", mediaType, src);
}

/** toParts is a send's input as parts. */
export function toParts(input: Input | undefined): PartInit[] {
  if (input === undefined || input === "") return [];
  return typeof input === "string" ? [text(input)] : input;
}

/** user is a user message (agent-core: History.user), e.g. to build a history for setHistory. */
export function user(input: Input): Message {
  return create(MessageSchema, { role: Role.USER, parts: toParts(input) });
}

/** assistant is an assistant message with text (agent-core: History.assistant). */
export function assistant(input: Input): Message {
  return create(MessageSchema, { role: Role.ASSISTANT, parts: toParts(input) });
}

/** system is a system message, e.g. a notice put into a history. */
export function system(input: Input): Message {
  return create(MessageSchema, { role: Role.SYSTEM, parts: toParts(input) });
}

/** textOf is the text parts of a message, joined. */
export function textOf(m: Message): string {
  return m.parts.map((p) => (p.kind.case === "text" ? p.kind.value : "")).join("");
}
