/** Reading one uploaded image (multipart field `file`) with a per-route size limit and a magic-byte check. */
import type { FastifyRequest } from 'fastify';
import { BadRequest, PayloadTooLarge } from '../../http/errors.ts';
import { sniffImage, type ImageKind } from './workers.rules.ts';

/**
 * @returns the bytes and their sniffed kind.
 * @throws 400 `missing_file` (no part `file`), 413 `payload_too_large` (over `maxBytes`),
 *   400 `invalid_image` (signature not one of `allowed`).
 */
export async function readImageUpload(
  req: FastifyRequest,
  maxBytes: number,
  allowed: ImageKind[],
): Promise<{ data: Buffer; kind: ImageKind }> {
  const part = await req.file({ limits: { fileSize: maxBytes, files: 1 } });
  if (part?.fieldname !== 'file') throw new BadRequest('missing_file', 'Send the image as the multipart field `file`.');
  const data = await part.toBuffer();
  if (part.file.truncated || data.length > maxBytes)
    throw new PayloadTooLarge(`The image is larger than ${Math.round(maxBytes / 1024 / 1024)} MB.`);
  if (!data.length) throw new BadRequest('missing_file', 'The uploaded file is empty.');
  const kind = sniffImage(data);
  if (!kind || !allowed.includes(kind))
    throw new BadRequest(
      'invalid_image',
      `The file must be one of: ${allowed.map((k) => k.toUpperCase()).join(', ')} (checked by content).`,
    );
  return { data, kind };
}
