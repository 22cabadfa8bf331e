export declare const COMPILE_CACHE_DIR: string;
export declare function enablePrivateCompileCache(): string | null;
export declare function privateFolder(dir: string): string | null;
