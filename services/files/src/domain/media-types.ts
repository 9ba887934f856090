import mime from 'mime-types';

export const OCTET_STREAM = 'application/octet-stream';

/**
 * Source and configuration files as text (docs/api/files.md#media-types), where the registry of
 * media types says something else or nothing: `.ts` is an MPEG transport stream there and `.rs`
 * an RLS services document, `.py` and `.go` unknown (application/octet-stream). A workspace of
 * coding agents holds such files above all, and clients decide from the type whether to show,
 * diff or read a file as text (MCP's read_media_file, resources, downloads).
 */
const SOURCE_EXTENSIONS: Record<string, string> = {
  ts: 'text/x-typescript', mts: 'text/x-typescript', cts: 'text/x-typescript', tsx: 'text/x-typescript',
  py: 'text/x-python', pyi: 'text/x-python', go: 'text/x-go', rs: 'text/x-rust', rb: 'text/x-ruby',
  kt: 'text/x-kotlin', kts: 'text/x-kotlin', swift: 'text/x-swift', scala: 'text/x-scala', cs: 'text/x-csharp',
  php: 'text/x-php', sh: 'text/x-shellscript', bash: 'text/x-shellscript', zsh: 'text/x-shellscript', ps1: 'text/x-powershell',
  sql: 'text/x-sql', pl: 'text/x-perl', r: 'text/x-r', jl: 'text/x-julia', hs: 'text/x-haskell', ex: 'text/x-elixir', exs: 'text/x-elixir',
  erl: 'text/x-erlang', clj: 'text/x-clojure', dart: 'text/x-dart', zig: 'text/x-zig', nim: 'text/x-nim', sol: 'text/x-solidity',
  fs: 'text/x-fsharp', m: 'text/x-objcsrc', mm: 'text/x-objcsrc', cpp: 'text/x-c++src', cc: 'text/x-c++src', hpp: 'text/x-c++src',
  vue: 'text/x-vue', svelte: 'text/x-svelte', proto: 'text/x-protobuf', graphql: 'text/x-graphql', gql: 'text/x-graphql',
  toml: 'text/x-toml', tf: 'text/x-terraform', hcl: 'text/x-hcl', gradle: 'text/x-gradle', cmake: 'text/x-cmake', mk: 'text/x-makefile',
  diff: 'text/x-diff', patch: 'text/x-diff', lock: 'text/plain', env: 'text/plain', bat: 'text/plain', gitignore: 'text/plain',
};

/** Files known by their whole name (no extension, or a leading dot), as text. */
const SOURCE_NAMES: Record<string, string> = {
  Dockerfile: 'text/x-dockerfile', Containerfile: 'text/x-dockerfile', Makefile: 'text/x-makefile', GNUmakefile: 'text/x-makefile',
  makefile: 'text/x-makefile', Rakefile: 'text/x-ruby', Gemfile: 'text/x-ruby', Vagrantfile: 'text/x-ruby', Jenkinsfile: 'text/plain',
  Procfile: 'text/plain', LICENSE: 'text/plain', README: 'text/plain', CODEOWNERS: 'text/plain', '.gitignore': 'text/plain',
  '.gitattributes': 'text/plain', '.dockerignore': 'text/plain', '.editorconfig': 'text/plain', '.npmrc': 'text/plain', '.env': 'text/plain',
  '.prettierrc': 'application/json', '.eslintrc': 'application/json',
};

const byExtension = new Map<string, string>();

/** The media type of a file name (`.md` → text/markdown, `.ts` → text/x-typescript, `Dockerfile` → text/x-dockerfile), else application/octet-stream. */
export function mimeTypeOf(name: string): string {
  if (Object.hasOwn(SOURCE_NAMES, name)) return SOURCE_NAMES[name]!;
  const dot = name.lastIndexOf('.');
  const ext = dot >= 0 ? name.slice(dot + 1).toLowerCase() : '';
  let type = byExtension.get(ext);
  if (type === undefined) {
    type = (Object.hasOwn(SOURCE_EXTENSIONS, ext) ? SOURCE_EXTENSIONS[ext] : undefined) ?? (mime.lookup(name) || OCTET_STREAM);
    // Extensions are few; names without one (or odd ones) are looked up each time.
    if (ext !== '' && byExtension.size < 10_000) byExtension.set(ext, type);
  }
  return type;
}
