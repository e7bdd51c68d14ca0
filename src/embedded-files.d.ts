/** Files embedded into the compiled binary import as their (virtual) path. */
declare module "*.db" {
  const path: string;
  export default path;
}
