/** The help lines of flags that several commands share, written once. */
export const STATE_FLAG_HELP = "  --state PATH|URL state file, or postgres:// URL (env IPLOOKUP_STATE)";
export const DATA_FLAG_HELP = "  --data PATH      IP range data file (env IPLOOKUP_DATA; default: the shipped data set)";
/** Downloads and unpacking (CONTRACT §13): data import and data update. */
export const DOWNLOAD_FLAGS_HELP = `  --download-timeout D  the longest one download may take (env IPLOOKUP_DOWNLOAD_TIMEOUT;
                   default 30m); one that sends nothing for 60 s, or no answer in 30 s,
                   ends sooner
  --max-expanded SIZE  the most unpacked from compressed sources (env IPLOOKUP_MAX_EXPANDED;
                   default 2GiB); a file that expands more than 100 times (plus 64 MiB)
                   stops too`;
