/**
 * Pure rules of the privacy area, shared with the web UI (docs/api.md, Privacy: export, erasure, retention).
 */

/** The text a user types to erase their account (`POST /api/crm/account/erase {confirm}`), exactly. */
export const ERASE_CONFIRMATION = 'DELETE MY ACCOUNT';
