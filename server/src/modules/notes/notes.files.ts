/**
 * The files a note accepts (docs/ARCHITECTURE.md, Research notes), with no imports: the service enforces
 * these and the web UI checks a file against the same table before sending it (web/build.js counts this file
 * among the app's inputs).
 */

/** Bytes in a mebibyte (the limits' "MB"). */
export const MB = 1024 * 1024;

/** The kind of a file source. */
export type FileKind = 'video' | 'audio' | 'pdf' | 'docx' | 'txt' | 'markdown' | 'image';

/**
 * Largest file of each kind, in bytes (whichever way it arrives). Video and audio are large because they are
 * transcribed; documents and images are read whole by their extractor or the vision model.
 */
export const KIND_LIMITS: Record<FileKind, number> = {
  video: 2048 * MB,
  audio: 500 * MB,
  pdf: 100 * MB,
  docx: 50 * MB,
  txt: 20 * MB,
  markdown: 20 * MB,
  image: 20 * MB,
};

/**
 * Largest total a DOCX may expand to when inflated (its parts together). A DOCX is a ZIP archive read whole
 * in memory, so a small file that expands to gigabytes (a zip bomb) is refused before it is read.
 */
export const DOCX_INFLATED_LIMIT = 256 * MB;

/** Largest file sent in one multipart request (the proxy's body cap is about 100 MB); larger: chunked upload. */
export const DIRECT_UPLOAD_LIMIT = 100 * MB;

/** Accepted file extensions (lower case, without the dot) and their kind. */
export const EXTENSIONS: Record<string, FileKind> = {
  mp4: 'video',
  mov: 'video',
  mkv: 'video',
  webm: 'video',
  avi: 'video',
  m4v: 'video',
  mp3: 'audio',
  wav: 'audio',
  m4a: 'audio',
  ogg: 'audio',
  oga: 'audio',
  opus: 'audio',
  flac: 'audio',
  aac: 'audio',
  pdf: 'pdf',
  docx: 'docx',
  txt: 'txt',
  text: 'txt',
  md: 'markdown',
  markdown: 'markdown',
  png: 'image',
  jpg: 'image',
  jpeg: 'image',
  gif: 'image',
  webp: 'image',
};
