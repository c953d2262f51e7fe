/** Types shared by the project page and the tabs it loads (kept here so that no tab imports its parent). */

/** The props every project tab receives: the project's technical name. */
export interface TabProps {
  project: string;
}
