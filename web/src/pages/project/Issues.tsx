import {
  DndContext,
  DragOverlay,
  KeyboardSensor,
  PointerSensor,
  useDraggable,
  useDroppable,
  useSensor,
  useSensors,
  type Announcements,
  type DragEndEvent,
  type KeyboardCoordinateGetter,
} from '@dnd-kit/core';
import { useQuery } from '@tanstack/react-query';
import { useMemo, useState, type KeyboardEventHandler, type PointerEventHandler, type ReactNode } from 'react';
import { useSearchParams } from 'react-router';
import { issuesQuery, useCreateIssue, useMoveIssue } from '../../features/issues/api';
import { useI18n } from '../../i18n';
import { Drawer, ErrorLine, Field, Loading, Modal, Select, TextArea } from '../../ui';
import {
  dropMove,
  PRIORITIES,
  PRIORITY_LABELS,
  STATUS_LABELS,
  STATUSES,
  toColumns,
  type Priority,
  type Status,
} from '../../features/issues/board';
import type { TabProps } from '../../features/projects/types';
import { IssueDetail } from '../../features/issues/IssueDetail';
import { Avatar } from '../../features/issues/Avatar';
import { GripVertical, Plus } from 'lucide-react';
import { icon } from '../../components/icon';

interface Card {
  id: number;
  title: string;
  status: Status;
  priority: string;
  assignee: string | null;
}

/**
 * Keyboard moves of a lifted card: Left and Right jump to the previous or next column (the card's top-left to the
 * column's), Up and Down do nothing; Space or Enter drops, Escape puts it back.
 */
const columnKeys: KeyboardCoordinateGetter = (event, { context, currentCoordinates }) => {
  const step = event.code === 'ArrowRight' ? 1 : event.code === 'ArrowLeft' ? -1 : 0;
  if (!step) return currentCoordinates;
  event.preventDefault();
  const from = (context.over?.id ?? context.active?.data.current?.status) as Status | undefined;
  const to = STATUSES[Math.min(STATUSES.length - 1, Math.max(0, STATUSES.indexOf(from ?? 'open') + step))];
  const rect = to ? context.droppableRects.get(to) : undefined;
  return rect ? { x: rect.left + 8, y: rect.top + 40 } : currentCoordinates;
};

/**
 * The board: a fixed-width column per status; a card is dragged to another column with the pointer or, from its
 * handle, with the keyboard (Space, arrows, Space). A card opens the issue in a drawer (its number in the
 * address, `?issue=`), where it is edited.
 */
export default function Issues({ project }: TabProps) {
  const { t } = useI18n();
  const issues = useQuery(issuesQuery(project));
  const [params, setParams] = useSearchParams();
  const open = Number(params.get('issue')) || null;
  const setOpen = (id: number | null) =>
    setParams(
      (p) => {
        const next = new URLSearchParams(p);
        if (id === null) next.delete('issue');
        else next.set('issue', String(id));
        return next;
      },
      { replace: false },
    );
  const [creating, setCreating] = useState(false);
  const [title, setTitle] = useState('');
  const [priority, setPriority] = useState<Priority>('P2');
  const [description, setDescription] = useState('');
  const [dragging, setDragging] = useState<Card | null>(null);
  const move = useMoveIssue(project);
  const create = useCreateIssue(project, {
    onSuccess: () => {
      setCreating(false);
      setTitle('');
      setDescription('');
    },
  });
  const sensors = useSensors(
    useSensor(PointerSensor, { activationConstraint: { distance: 5 } }),
    useSensor(KeyboardSensor, { coordinateGetter: columnKeys }),
  );
  const list = useMemo(() => issues.data?.issues ?? [], [issues.data]);
  const byId = (id: unknown) => list.find((i) => i.id === Number(id));
  const column = (id: unknown) => (STATUSES.includes(id as Status) ? t(STATUS_LABELS[id as Status]) : '');
  const announcements: Announcements = {
    onDragStart: ({ active }) => t('Picked up “{title}”.', { title: byId(active.id)?.title ?? '' }),
    onDragOver: ({ active, over }) =>
      over ? t('“{title}” is over {column}.', { title: byId(active.id)?.title ?? '', column: column(over.id) }) : '',
    onDragEnd: ({ active, over }) =>
      over
        ? t('“{title}” was dropped in {column}.', { title: byId(active.id)?.title ?? '', column: column(over.id) })
        : t('“{title}” was put back.', { title: byId(active.id)?.title ?? '' }),
    onDragCancel: ({ active }) => t('“{title}” was put back.', { title: byId(active.id)?.title ?? '' }),
  };
  if (issues.isPending) return <Loading />;
  const cols = toColumns(list);
  const onDragEnd = (e: DragEndEvent) => {
    setDragging(null);
    if (!e.over) return;
    const m = dropMove(list, Number(e.active.id), e.over.id as Status);
    if (m) move.mutate(m);
  };
  return (
    <div>
      <div className="actions">
        <button type="button" className="primary" onClick={() => setCreating(true)}>
          <Plus {...icon} />
          {t('New issue')}
        </button>
      </div>
      <ErrorLine error={issues.error ?? move.error} />
      <DndContext
        sensors={sensors}
        accessibility={{
          announcements,
          screenReaderInstructions: {
            draggable: t(
              'To move an issue, press Space, then the Left or Right arrow to pick a column, then Space to drop it there or Escape to cancel.',
            ),
          },
        }}
        onDragStart={(e) => setDragging(byId(e.active.id) ?? null)}
        onDragCancel={() => setDragging(null)}
        onDragEnd={onDragEnd}
      >
        <div className="board" role="region" aria-label={t('Board')} tabIndex={0}>
          {STATUSES.map((status) => (
            <Column key={status} status={status} count={cols[status].length}>
              {cols[status].map((i) => (
                <IssueCard key={i.id} issue={i} onOpen={() => setOpen(i.id)} />
              ))}
            </Column>
          ))}
        </div>
        <DragOverlay>{dragging && <CardFace issue={dragging} />}</DragOverlay>
      </DndContext>
      <Modal open={creating} onOpenChange={setCreating} title={t('New issue')}>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            create.mutate({ title, priority, ...(description ? { description } : {}) });
          }}
        >
          <Field label={t('Title')} required maxLength={500} value={title} onChange={(e) => setTitle(e.target.value)} />
          <Select
            label={t('Priority')}
            value={priority}
            onChange={(v) => setPriority(v as Priority)}
            options={PRIORITIES.map((p) => ({ value: p, label: `${p} · ${t(PRIORITY_LABELS[p])}` }))}
          />
          <TextArea
            label={t('Description')}
            maxLength={100_000}
            value={description}
            onChange={(e) => setDescription(e.target.value)}
          />
          <ErrorLine
            error={create.error}
            fields={{ title: t('Title'), priority: t('Priority'), description: t('Description') }}
          />
          <button type="submit" className="primary" disabled={create.isPending}>
            <Plus {...icon} />
            {t('Create')}
          </button>
        </form>
      </Modal>
      <Drawer
        open={open !== null}
        onOpenChange={(o) => !o && setOpen(null)}
        title={byId(open)?.title ?? t('Issue #{id}', { id: open ?? 0 })}
      >
        {open !== null && <IssueDetail project={project} id={open} />}
      </Drawer>
    </div>
  );
}

/** A status column: the drop target of cards. */
function Column({ status, count, children }: { status: Status; count: number; children: ReactNode }) {
  const { t } = useI18n();
  const { setNodeRef, isOver } = useDroppable({ id: status });
  return (
    <section
      ref={setNodeRef}
      className={isOver ? 'column over' : 'column'}
      aria-label={t(STATUS_LABELS[status])}
      data-status={status}
    >
      <h2>
        {t(STATUS_LABELS[status])} <span className="count">{count}</span>
      </h2>
      <ul>{children}</ul>
    </section>
  );
}

/** A card on the board: dragged by the pointer anywhere on it, or from the keyboard by its handle. */
function IssueCard({ issue, onOpen }: { issue: Card; onOpen: () => void }) {
  const { t } = useI18n();
  const { attributes, listeners, setNodeRef, setActivatorNodeRef, isDragging } = useDraggable({
    id: issue.id,
    data: { status: issue.status },
  });
  return (
    <li
      ref={setNodeRef}
      className={isDragging ? 'issue dragging' : 'issue'}
      data-issue={issue.id}
      onPointerDown={listeners?.onPointerDown as PointerEventHandler | undefined}
    >
      <CardFace issue={issue} onOpen={onOpen} />
      <button
        type="button"
        ref={setActivatorNodeRef}
        className="handle"
        {...attributes}
        onKeyDown={listeners?.onKeyDown as KeyboardEventHandler | undefined}
        aria-label={t('Move “{title}”', { title: issue.title })}
      >
        <GripVertical {...icon} />
      </button>
    </li>
  );
}

/** What a card shows: number, title (wrapped anywhere), priority and the assignee's avatar. */
function CardFace({ issue, onOpen }: { issue: Card; onOpen?: () => void }) {
  const { t } = useI18n();
  return (
    <>
      {onOpen ? (
        <button type="button" className="link title" onClick={onOpen}>
          {issue.title}
        </button>
      ) : (
        <span className="title">{issue.title}</span>
      )}
      <span className="meta">
        <span className="num">#{issue.id}</span>
        <span
          className={`prio ${issue.priority}`}
          title={t(PRIORITY_LABELS[issue.priority as Priority] ?? issue.priority)}
        >
          {issue.priority}
        </span>
        {issue.assignee && <span className="sr-only">{t('Assigned to {name}', { name: issue.assignee })}</span>}
        <Avatar name={issue.assignee} />
      </span>
    </>
  );
}
