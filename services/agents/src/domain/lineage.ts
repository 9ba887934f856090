import { errors } from '@workspace/platform';
import { charCount, hasLoneSurrogate } from './text.js';

export const CHANGE_NOTE_MAX = 1_000;

/** What a configuration carries besides its content (docs/api/agents.md#change-notes-and-lineage): not part of contentDigest. */
export interface Lineage {
  /** Why the config was made; "" by default. */
  changeNote: string;
  /** The config it was made from (the base of the PATCH); null for an Agent's first. */
  parentConfigId: string | null;
}

/** A submitted change note: absent is "", at most 1,000 characters of valid Unicode. */
export function checkChangeNote(note: string | undefined): string {
  if (note === undefined) return '';
  if (hasLoneSurrogate(note) || charCount(note) > CHANGE_NOTE_MAX) {
    throw errors.invalidArgument(`changeNote must be at most ${CHANGE_NOTE_MAX} characters`, 'changeNote');
  }
  return note;
}
