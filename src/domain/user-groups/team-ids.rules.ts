/*
 * Which team_ids an import keeps (docs/adr/0003-shared-data-sources-and-kept-team-ids.md). A
 * team_id is kept when this deployment never issued it: above the numbering's mark (the highest
 * number issued or kept so far), or inside a gap, a range the mark jumped over when an earlier line
 * kept a higher one. So the lines of an import keep their team_ids whatever their order. The engines
 * run the SQL; these functions decide.
 */

/**
 * The highest team_id an import keeps. Kept numbers raise the mark that later groups are numbered
 * above, so this bound leaves every deployment more than 9 × 10^15 numbers to issue (team_ids go
 * up to 2^53 − 1) however high the imported ones are.
 */
export const MAX_KEPT_TEAM_ID = 2_147_483_647;

/** A range of team_ids, both ends included, that the numbering jumped over and never issued. */
export interface TeamIdGap {
  low: number;
  high: number;
}

/** Whether an import may ask to keep this team_id at all; the store still decides whether it was issued. */
export const keepableTeamId = (teamId: number | undefined): teamId is number =>
  teamId !== undefined && teamId >= 1 && teamId <= MAX_KEPT_TEAM_ID;

/**
 * The gaps to remove and add once `teamId` is kept, given the mark before it and the gap that held
 * it (none when it was above the mark): a gap loses the kept number; a jump over the mark leaves a
 * gap below the kept number.
 */
export function gapsAfterKeeping(
  teamId: number,
  mark: number,
  holding: TeamIdGap | null,
): { remove: TeamIdGap | null; add: TeamIdGap[] } {
  const pieces = holding
    ? [
        { low: holding.low, high: teamId - 1 },
        { low: teamId + 1, high: holding.high },
      ]
    : teamId > mark
      ? [{ low: mark + 1, high: teamId - 1 }]
      : [];
  return { remove: holding, add: pieces.filter((gap) => gap.low <= gap.high) };
}
