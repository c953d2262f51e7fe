import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { useI18n } from '../../i18n';
import { ConfirmDialog, ErrorLine, Loading } from '../../ui';
import { AddSources } from './AddSources';
import { noteKeys, noteQuery, useDeleteNote } from './api';
import { NoteChat } from './NoteChat';
import { sourcesToFollow } from './notesUpload';
import { SourceRow } from './SourceRow';

/** One note: its sources (with adding), the grounded chat and the linked issues; delete with confirmation. */
export function NoteView({ project, id, onBack }: { project: string; id: number; onBack: () => void }) {
  const { t } = useI18n();
  const qc = useQueryClient();
  const [deleting, setDeleting] = useState(false);
  const note = useQuery(noteQuery(project, id));
  const remove = useDeleteNote(project, { onSuccess: () => onBack() });
  const refresh = () => qc.invalidateQueries({ queryKey: noteKeys.one(project, id) });
  const back = (
    <button type="button" className="link" onClick={onBack}>
      ← {t('All notes')}
    </button>
  );
  if (note.isPending) return <Loading />;
  if (note.isError)
    return (
      <div>
        {back}
        <ErrorLine error={note.error} />
      </div>
    );
  const n = note.data;
  const follow = sourcesToFollow(n.sources);
  return (
    <div className="note">
      {back}
      <div className="note-head">
        <h2>{n.title}</h2>
        <button type="button" className="danger" onClick={() => setDeleting(true)}>
          {t('Delete note')}
        </button>
      </div>
      {n.description && <p className="pre">{n.description}</p>}
      <div className="split">
        <section aria-labelledby="note-sources">
          <h3 id="note-sources">{t('Sources')}</h3>
          {n.sources.length ? (
            <ul className="list note-sources">
              {n.sources.map((s) => (
                <SourceRow
                  key={s.id}
                  project={project}
                  noteId={id}
                  source={s}
                  follow={follow.has(s.id)}
                  onChanged={refresh}
                />
              ))}
            </ul>
          ) : (
            <p className="muted">{t('No sources yet.')}</p>
          )}
          <AddSources project={project} noteId={id} onAdded={refresh} />
        </section>
        <section aria-labelledby="note-chat">
          <h3 id="note-chat">{t('Ask the sources')}</h3>
          <NoteChat project={project} note={n} onDone={refresh} />
          <h3>{t('Linked issues')}</h3>
          {n.issue_links.length ? (
            <ul className="list">
              {n.issue_links.map((l) => (
                <li key={l.issue_id}>
                  <Link to={`/projects/${project}/issues`}>
                    #{l.issue_id} {l.title}
                  </Link>
                </li>
              ))}
            </ul>
          ) : (
            <p className="muted">{t('Issues the chat creates are linked here.')}</p>
          )}
        </section>
      </div>
      <ConfirmDialog
        open={deleting}
        title={t('Delete the note?')}
        busy={remove.isPending}
        onCancel={() => setDeleting(false)}
        onConfirm={() => remove.mutate(id)}
        error={remove.error}
      >
        <p>
          {t('“{title}” goes with its sources, chat and issue links. The issues themselves stay.', { title: n.title })}
        </p>
      </ConfirmDialog>
    </div>
  );
}
