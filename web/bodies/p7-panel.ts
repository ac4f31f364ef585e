/** The AIRBOT P7's body panel: raw error ids per joint and the flange position from the kinematics. */
import { P7Kinematics } from "../../src/bodies/p7/kinematics.js";
import type { BodyClient } from "../../src/client/index.js";
import { dl, sub } from "../panels.js";
import { fmt, make, setText } from "../util.js";
import type { BodyPanel } from "./common.js";

export function p7Panel(host: HTMLElement, c: BodyClient<"p7">): BodyPanel<"p7"> {
  const k = new P7Kinematics();
  const errs = sub(host, "Error ids (raw integers, 0 = normal)");
  const list = make("ul", "chips errors");
  list.id = "p7-errors";
  const items = Array.from({ length: 7 }, (_, i) => {
    const li = make("li", undefined, `joint${i + 1}: —`);
    list.append(li);
    return li;
  });
  errs.append(list);
  const v = dl(sub(host, "Arm"), [
    ["p7-flange", "Flange (kinematics), m"],
    ["p7-effort", "Largest effort"],
  ]);
  return {
    update() {
      const m = c.getMotorState();
      items.forEach((li, i) => {
        const id = m?.errorIds[i];
        setText(li, `joint${i + 1}: ${id === undefined ? "—" : id}`);
        li.dataset.on = String(id !== undefined && id !== 0);
      });
      const j = c.getJointState();
      if (j) {
        k.update(j.angles);
        setText(v["p7-flange"]!, `${fmt(k.flangeM[0])}, ${fmt(k.flangeM[1])}, ${fmt(k.flangeM[2])}`);
        let best = 0;
        for (let i = 1; i < j.efforts.length; i++) if (Math.abs(j.efforts[i]!) > Math.abs(j.efforts[best]!)) best = i;
        setText(v["p7-effort"]!, `joint${best + 1}: ${fmt(j.efforts[best], 2)} N·m`);
      }
    },
  };
}
