import type { DigestContext } from '../digest/digestContext.js';
import type { HomeRefresher } from '../home/homeRefresher.js';
import type { InFlight } from '../inFlight.js';
import type { JobsContext } from '../jobs/jobsContext.js';
import type { UserNames } from '../slack/plainText.js';

/** What every door (command, event, shortcut, action, view) is given. */
export interface ListenerContext {
  jobs: JobsContext;
  userNames: UserNames;
  /** Work that outlives a request (Home refreshes, checks); each request is tracked by `Work.handle`. */
  inFlight: InFlight;
  digest: DigestContext;
  /** Publishes and refreshes people's Home tabs. */
  home: HomeRefresher;
}
