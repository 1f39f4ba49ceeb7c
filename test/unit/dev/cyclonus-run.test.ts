// How the node scenario reads `cyclonus generate` (test/node/support/cyclonus-run.ts): its JUnit
// file and summary table, in the shapes cyclonus v0.5.6 writes them (taken from a --mock run).
import {
  cyclonusArgs,
  DEFAULT_EXCLUDE,
  DEFAULT_INCLUDE,
  parseCyclonusRun,
} from "../../node/support/cyclonus-run.js";

const junit = `<testsuite tests="0" failures="1" time="" name="cyclonus">
    <properties></properties>
    <testcase classname="" name="set pod selector to [&#34;MatchLabels&#34;,[&#34;pod: a&#34;],&#34;MatchExpression&#34;,null]" time="">
        <failure message="" type=""></failure>
    </testcase>
    <testcase classname="" name="deny all &amp; more" time=""></testcase>
</testsuite>`;

const row = "+------+--------+---------------+-------+-------+---------+";
const log = `SummaryTable:
${row}
| 1: set pod selector to                                  | failed |               |       |       |         |
| ["MatchLabels",["pod:                                   |        |               |       |       |         |
| a"],"MatchExpression",null]                             |        |               |       |       |         |
${row}
|                                                         |        | Step 1, try 1 |    16 |    56 |       9 | 120 / 144 (83%) | -    | 112 / 144 (77%) |
${row}
|                                                         |        | Step 1, try 2 |     2 |    70 |       9 | 120 / 144 (83%) | -    | 112 / 144 (77%) |
${row}
| 2: deny all & more                                      | passed |               |       |       |         |
${row}
|                                                         |        | Step 1, try 1 |     0 |    72 |       9 | 144 / 144 (100%) | -    | 144 / 144 (100%) |
${row}
|                                                         |        | Step 2, try 1 |     0 |    72 |       9 | 144 / 144 (100%) | -    | 144 / 144 (100%) |
${row}
`;

describe("reading a cyclonus generate run", () => {
  it("takes each case's name and verdict from the JUnit file, entities decoded", () => {
    expect(parseCyclonusRun(log, junit).cases).toEqual([
      {
        name: 'set pod selector to ["MatchLabels",["pod: a"],"MatchExpression",null]',
        passed: false,
      },
      { name: "deny all & more", passed: true },
    ]);
  });

  it("counts the connections of each step's last try only (a retried step counts once)", () => {
    expect(parseCyclonusRun(log, junit)).toMatchObject({
      wrong: 2,
      right: 70 + 72 + 72,
      ignored: 27,
    });
  });

  it("asks for TCP and UDP only to Pod IPs, SCTP excluded, loopback ignored; the cases chosen by the environment", () => {
    const args = cyclonusArgs("127.0.0.1:5000/x", {});
    expect(args).toEqual(
      expect.arrayContaining([
        "generate",
        "--server-protocol=TCP,UDP",
        "--ignore-loopback",
        "--image-registry=127.0.0.1:5000/x",
        `--exclude=${DEFAULT_EXCLUDE.join(",")}`,
      ]),
    );
    expect(args).toContain(`--include=${DEFAULT_INCLUDE.join(",")}`);
    expect(args).toContain("--destination-type=pod-ip");
    const all = cyclonusArgs("r", { SDEWAN_CYCLONUS_INCLUDE: "all" });
    expect(all.some((a) => a.startsWith("--include"))).toBe(false);
    const chosen = cyclonusArgs("r", {
      SDEWAN_CYCLONUS_INCLUDE: "conflict",
      SDEWAN_CYCLONUS_EXCLUDE: "sctp",
      SDEWAN_CYCLONUS_DESTINATION: "pod-ip",
    });
    expect(chosen).toEqual(
      expect.arrayContaining(["--include=conflict", "--exclude=sctp", "--destination-type=pod-ip"]),
    );
  });
});
