/** Types of web/build.js (plain JavaScript, so `npm start` runs it without a compiler). */
export declare const DIST: string;
export declare function sourceKey(): string;
export declare function generateApiTypes(): Promise<void>;
export declare function viteConfig(): Promise<Record<string, unknown>>;
export declare function ensureWebBuild(opts?: { force?: boolean; log?: (line: string) => void }): Promise<boolean>;
