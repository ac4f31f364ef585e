/**
 * Builders for the chest-board request messages used outside the cycle (handshake, preference
 * reads, chest tools). Pure; allocate (prepare side).
 */
import { BoardType, type BoardSpec, ControlOp, Kind, Register } from "./constants.js";
import type { ChestMessage } from "./frame.js";

const msg = (kind: Kind, bus: number, address: number, ...payload: number[]): ChestMessage => ({ kind, bus, address, payload: Uint8Array.from(payload) });

/** `00 <bus> <board> 20`: ask a board for its 32-byte status + configuration. */
export function configRequest(board: Pick<BoardSpec, "bus" | "address">): ChestMessage {
  return msg(Kind.Read, board.bus, board.address, Register.Configuration);
}

/** `01 <bus> <board> 07` for joint boards, `… 08` for hand and foot boards. */
export function startCommand(board: Pick<BoardSpec, "bus" | "address" | "type">): ChestMessage {
  const op = board.type === BoardType.Joint ? ControlOp.StartJointBoard : ControlOp.StartHandFootBoard;
  return msg(Kind.Control, board.bus, board.address, op);
}

/** `04 00 00 <u16 offset> <u8 length>`: read one preference piece. */
export function prefReadRequest(offset: number, length: number): ChestMessage {
  return msg(Kind.PrefRead, 0, 0, offset & 0xff, offset >> 8, length);
}

export function readRegister(bus: number, address: number, register: Register): ChestMessage {
  return msg(Kind.Read, bus, address, register);
}

export function controlCommand(bus: number, address: number, op: ControlOp): ChestMessage {
  return msg(Kind.Control, bus, address, op);
}
