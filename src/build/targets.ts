/** The platforms a release is built for: Bun's compile target and Debian's architecture. */
export interface ReleaseTarget {
  /** In artefact names: iplookup-VERSION-linux-x64. */
  readonly name: string;
  readonly bunTarget: string;
  readonly debArch: string;
}

export const RELEASE_TARGETS: readonly ReleaseTarget[] = [
  { name: "linux-x64", bunTarget: "bun-linux-x64", debArch: "amd64" },
  { name: "linux-arm64", bunTarget: "bun-linux-arm64", debArch: "arm64" },
];
