export type { Address, IPv4Address, IPv6Address } from "./address.ts";
export { parseAddress, ipv4Text, ipv6Text } from "./parse.ts";
export { classifyAddress } from "./classify.ts";
export { checkAddress, type AddressCheck } from "./check.ts";
export { parseCidr, cidrContains, type Cidr } from "./cidr.ts";
