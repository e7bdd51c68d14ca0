/** Files the console imports with `{ type: "text" }`: their text. (.html is typed by Bun.) */
declare module "*.css" {
  const text: string;
  export default text;
}
declare module "*.svg" {
  const text: string;
  export default text;
}
