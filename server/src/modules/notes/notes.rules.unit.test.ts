import { describe, expect, it } from 'vitest';
import { cutText, defaultTitle, fileProblem, KIND_LIMITS, kindOf, safeFileName, youtubeId } from './notes.rules.ts';

describe('note source rules', () => {
  it('knows each accepted kind by extension only', () => {
    expect(kindOf('a.MP4')).toBe('video');
    expect(kindOf('a.m4a')).toBe('audio');
    expect(kindOf('a.pdf')).toBe('pdf');
    expect(kindOf('a.docx')).toBe('docx');
    expect(kindOf('a.txt')).toBe('txt');
    expect(kindOf('README.md')).toBe('markdown');
    expect(kindOf('a.jpeg')).toBe('image');
    for (const f of ['a.exe', 'a.doc', 'a.svg', 'a.html', 'noext', 'a.pdf.exe']) expect(kindOf(f), f).toBeNull();
  });
  it('refuses unknown types, empty files and files over their kind limit', () => {
    expect(fileProblem('a.exe', 10)?.code).toBe('unsupported_type');
    expect(fileProblem('a.pdf', 0)?.code).toBe('empty_file');
    expect(fileProblem('a.pdf', KIND_LIMITS.pdf)).toBeNull();
    expect(fileProblem('a.pdf', KIND_LIMITS.pdf + 1)).toMatchObject({ code: 'file_too_large', limit: KIND_LIMITS.pdf });
    expect(fileProblem('a.mp4', 1024 ** 3)).toBeNull();
  });
  it('keeps safe file names on disk', () => {
    expect(safeFileName('../../etc/passwd.txt')).toBe('passwd.txt');
    expect(safeFileName('..\\..\\x y?.pdf')).toBe('x_y_.pdf');
    expect(safeFileName('.hidden.md')).toBe('hidden.md');
    expect(safeFileName('...')).toBe('file');
  });
  it('names sources by file name or address', () => {
    expect(defaultTitle({ filename: 'dir/Report.pdf' })).toBe('Report.pdf');
    expect(defaultTitle({ url: 'https://example.com/a/b?x=1' })).toBe('example.com/a/b');
    expect(defaultTitle({ url: 'https://example.com/' })).toBe('example.com');
  });
  it('reads YouTube video ids from the usual address forms only', () => {
    expect(youtubeId('https://www.youtube.com/watch?v=dQw4w9WgXcQ')).toBe('dQw4w9WgXcQ');
    expect(youtubeId('https://youtu.be/dQw4w9WgXcQ?t=3')).toBe('dQw4w9WgXcQ');
    expect(youtubeId('https://m.youtube.com/shorts/dQw4w9WgXcQ')).toBe('dQw4w9WgXcQ');
    expect(youtubeId('https://example.com/watch?v=dQw4w9WgXcQ')).toBeNull();
    expect(youtubeId('https://www.youtube.com/watch?v=short')).toBeNull();
    expect(youtubeId('javascript:alert(1)')).toBeNull();
  });
  it('cuts text at the limit, on a line break near the end', () => {
    expect(cutText('abc', 10)).toBe('abc');
    expect(cutText('a'.repeat(95) + '\n' + 'b'.repeat(20), 100)).toBe('a'.repeat(95));
    expect(cutText('x'.repeat(200), 100)).toHaveLength(100);
  });
});
