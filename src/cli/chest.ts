/**
 * The chest-board tools Aldebaran ships as chest-version, chest-mode and chest-harakiri, on the same
 * link. They need the chest board free: with a runtime running they refuse and say how to stop it.
 * None of them puts the board into its boot loader. Without --usb they talk to a simulated board.
 */
import type { Command } from "commander";
import { SimChestboard } from "../sim/nao/chestboard.js";
import type { ChestboardTransport } from "../transport/chestboard.js";
import { ChestboardLink } from "../transport/chestboard-link.js";
import { openUsbChestboard } from "../transport/usb.js";
import { listRuntimes } from "./discovery.js";
import { BodylinkError } from "../errors.js";
import { CliError } from "./errors.js";

async function withFreeBoard<T>(o: { usb?: boolean }, f: (link: ChestboardLink, sim: SimChestboard | null) => Promise<T>): Promise<T> {
  const naos = listRuntimes().filter((x) => x.body === "nao");
  // The USB board is held by a runtime on USB; a simulated one by any NAO runtime (as before several ran).
  const r = naos.find((x) => x.transport === "usb") ?? (o.usb ? undefined : naos[0]);
  if (r) {
    throw new BodylinkError("BL_ERR_LINK_BUSY", `${r.name}, pid ${r.pid}, ${r.transport}`, r.pid);
  }
  const sim = o.usb ? null : new SimChestboard();
  const transport: ChestboardTransport = sim ?? (await openUsbChestboard());
  try {
    return await f(new ChestboardLink(transport), sim);
  } finally {
    await transport.close();
  }
}

export function registerChest(program: Command): void {
  const chest = program.command("chest").description("chest-board tools (chest-version, chest-mode, chest-harakiri); need the board free");
  chest
    .command("version")
    .description("print the chest board's firmware version")
    .option("--usb", "the real chest board over USB (default: simulated)")
    .action(async (o: { usb?: boolean }) => {
      console.log(await withFreeBoard(o, (l) => l.readFirmwareVersion()));
    });
  chest
    .command("mode")
    .description("print the chest board's mode")
    .option("--usb", "the real chest board over USB (default: simulated)")
    .action(async (o: { usb?: boolean }) => {
      const m = await withFreeBoard(o, (l) => l.readMode());
      console.log(`${m.name} (${m.code})`);
    });
  chest
    .command("harakiri")
    .description("power the robot off (or reboot with -r); does not enter the boot loader")
    .option("-r, --reboot", "reboot instead of powering off")
    .option("--usb", "the real chest board over USB (default: simulated)")
    .action(async (o: { usb?: boolean; reboot?: boolean }) => {
      await withFreeBoard(o, async (l, sim) => {
        await l.harakiri(Boolean(o.reboot));
        if (sim && !o.reboot && !sim.poweredOff) throw new CliError("the simulated chest board did not power off");
      });
      console.log(o.reboot ? "chest board: rebooting" : "chest board: powering off");
    });
}
