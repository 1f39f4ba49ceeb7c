// setupFilesAfterEnv of the integration project: every test talks to one API server shared by the
// whole run on a small, busy machine, so Jest's default 5 s per test is too tight. (Jest's
// project-level testTimeout is ignored by jest-circus; this is the per-project way.)
import { jest } from "@jest/globals";

jest.setTimeout(30_000);
