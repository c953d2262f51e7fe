/**
 * The shared props of a decorative lucide icon beside a button's text: 16 px, `currentColor` strokes, hidden from
 * assistive technology (the button's text or aria-label stays its accessible name). Import each icon by name from
 * `lucide-react` (tree-shaken) and spread these: `<Send {...icon} />`.
 */
export const icon = { size: 16, 'aria-hidden': true, className: 'icon' } as const;
