/** cm's migrations in the order they run; a migration's name is what the database recorded, never changed. */
import { spectraLatestEvents } from "./0001-spectra-latest-events";
import { jobs } from "./0002-jobs";
import { waveformEnvelope } from "./0003-waveform-envelope";

export const migrations = [spectraLatestEvents, jobs, waveformEnvelope];
