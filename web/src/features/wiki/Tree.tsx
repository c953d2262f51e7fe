/** A page or folder of the wiki tree. */
export interface Node {
  path: string;
  title: string;
  children?: Node[];
}

/** The wiki's page tree; the open page is marked current. */
export function Tree({ nodes, onOpen, current }: { nodes: Node[]; onOpen: (p: string) => void; current: string }) {
  return (
    <ul className="tree">
      {nodes.map((n) => (
        <li key={n.path}>
          <button
            type="button"
            className="link"
            aria-current={n.path === current ? 'page' : undefined}
            onClick={() => onOpen(n.path)}
          >
            {n.title}
          </button>
          {n.children?.length ? <Tree nodes={n.children} onOpen={onOpen} current={current} /> : null}
        </li>
      ))}
    </ul>
  );
}
