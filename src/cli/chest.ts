/**
 * The chest-board tools Aldebaran ships as chest-version, chest-mode and chest-harakiri, on the same
 * link. They talk to the real chest board over USB and need it free: with a runtime running they
 * refuse and say how to stop it (board.ts). `--sim` asks for the simulated board, and the first
 * line says so. None of them puts the board into its boot loader.
 */
import type { Command } from "commander";
import type { SimChestboard } from "../sim/nao/chestboard.js";
import type { ChestboardTransport } from "../transport/chestboard.js";
import type { ChestboardLink } from "../transport/chestboard-link.js";
import { type BoardFlags, SIM_NOTE, toolSource } from "./board.js";
import { CliError } from "./errors.js";

async function withFreeBoard<T>(o: BoardFlags, command: string, f: (link: ChestboardLink, sim: SimChestboard | null) => Promise<T>): Promise<T> {
  const source = toolSource(o, command);
  // The board's modules load when a tool runs, not with the CLI.
  const [{ SimChestboard }, { ChestboardLink }, { openUsbChestboard }] = await Promise.all([
    import("../sim/nao/chestboard.js"),
    import("../transport/chestboard-link.js"),
    import("../transport/usb.js"),
  ]);
  const sim = source.kind === "sim" ? new SimChestboard() : null;
  const transport: ChestboardTransport = sim ?? (await openUsbChestboard());
  if (sim) console.log(SIM_NOTE);
  try {
    return await f(new ChestboardLink(transport), sim);
  } finally {
    await transport.close();
  }
}

const SIM_HELP = "the simulated chest board (says so in its first line)";
const USB_HELP = "the real chest board over USB (the default)";

export function registerChest(program: Command): void {
  const chest = program.command("chest").description("chest-board tools (chest-version, chest-mode, chest-harakiri) on the real board over USB; need the board free");
  chest
    .command("version")
    .description("print the chest board's firmware version")
    .option("--sim", SIM_HELP)
    .option("--usb", USB_HELP)
    .action(async (o: BoardFlags) => {
      console.log(await withFreeBoard(o, "chest version", (l) => l.readFirmwareVersion()));
    });
  chest
    .command("mode")
    .description("print the chest board's mode")
    .option("--sim", SIM_HELP)
    .option("--usb", USB_HELP)
    .action(async (o: BoardFlags) => {
      const m = await withFreeBoard(o, "chest mode", (l) => l.readMode());
      console.log(`${m.name} (${m.code})`);
    });
  chest
    .command("harakiri")
    .description("power the robot off (or reboot with -r); does not enter the boot loader")
    .option("-r, --reboot", "reboot instead of powering off")
    .option("--sim", SIM_HELP)
    .option("--usb", USB_HELP)
    .action(async (o: BoardFlags & { reboot?: boolean }) => {
      const simulated = await withFreeBoard(o, "chest harakiri", async (l, sim) => {
        await l.harakiri(Boolean(o.reboot));
        if (sim && !o.reboot && !sim.poweredOff) throw new CliError("the simulated chest board did not power off");
        return sim !== null;
      });
      const what = o.reboot ? "rebooting" : "powering off";
      console.log(simulated ? `simulated chest board: ${what} (no robot was touched)` : `chest board: ${what}`);
    });
}
