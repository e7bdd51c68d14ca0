/** The help lines of flags that several commands share, written once. */
export const STATE_FLAG_HELP = "  --state PATH|URL state file, or postgres:// URL (env IPLOOKUP_STATE)";
export const DATA_FLAG_HELP = "  --data PATH      IP range data file (env IPLOOKUP_DATA; default: the shipped data set)";
