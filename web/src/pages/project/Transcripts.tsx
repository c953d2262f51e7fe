/**
 * Meeting transcripts of a project: upload a recording (with upload progress), follow its job's steps live,
 * list the transcripts, and read one (`?id=` in the URL): text, summary and, for videos, the frames.
 */
import { useSearchParams } from 'react-router';
import type { TabProps } from '../../features/projects/types';
import { TranscriptDetail } from '../../features/transcripts/TranscriptDetail';
import { TranscriptList } from '../../features/transcripts/TranscriptList';
import { Upload } from '../../features/transcripts/Upload';

/** The Transcripts tab: the upload form and the list, or one transcript when `?id=` is set. */
export default function Transcripts({ project }: TabProps) {
  const [params, setParams] = useSearchParams();
  const id = Number(params.get('id'));
  if (Number.isInteger(id) && id > 0) return <TranscriptDetail key={id} project={project} id={id} />;
  return (
    <div>
      <Upload project={project} onQueued={(tid) => setParams({ id: String(tid) })} />
      <TranscriptList project={project} />
    </div>
  );
}
