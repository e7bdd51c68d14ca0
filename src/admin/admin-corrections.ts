import type { Static } from "@sinclair/typebox";
import type { Actor, AuditLog } from "../audit/audit-log.ts";
import { CorrectionService } from "../corrections/correction-service.ts";
import { CorrectionError, checkCorrectionFields, checkNote, parseCorrectionBlock } from "../corrections/correction-rules.ts";
import { correctionJson } from "../corrections/correction-json.ts";
import { ApiError } from "../errors/api-error.ts";
import { StoreError, type Store } from "../store/store.ts";
import type { AdminCorrection, PutCorrectionRequest } from "./admin-schemas.ts";

/**
 * The admin API's local corrections (CONTRACT §15), without seeing a request: the body
 * arrives with its JSON shape checked (admin-schemas.ts), and what a schema cannot say
 * (a country code that is no country, control characters, a body naming no field, a
 * block with host bits set) is checked here, before anything is written, and answered
 * 400 invalid_request.
 */
export class AdminCorrections {
  private readonly service: CorrectionService;

  constructor(
    private readonly store: Store,
    audit: AuditLog,
  ) {
    this.service = new CorrectionService(store, audit);
  }

  async list(): Promise<Static<typeof AdminCorrection>[]> {
    return (await this.store.listCorrections()).map(correctionJson);
  }

  async put(actor: Actor, cidrParam: string | null, body: Static<typeof PutCorrectionRequest>): Promise<Static<typeof AdminCorrection>> {
    const { note, ...fields } = body;
    const [cidr, checked, checkedNote] = refused(() => [blockOf(cidrParam), checkCorrectionFields(fields), checkNote(note)] as const);
    try {
      return correctionJson(await this.service.set(actor, cidr, checked, checkedNote));
    } catch (error) {
      // The store checks again what was checked above; should it still refuse, say why.
      if (error instanceof StoreError) throw new ApiError("invalid_request", error.message);
      throw error;
    }
  }

  async remove(actor: Actor, cidrParam: string | null): Promise<Static<typeof AdminCorrection>> {
    const cidr = refused(() => blockOf(cidrParam));
    const removed = await this.service.remove(actor, cidr);
    if (!removed) throw new ApiError("not_found", `there is no correction of ${cidr}`);
    return correctionJson(removed);
  }
}

/**
 * The block a path names: `/` written as `_` or as `%2F` (which the router decoded, as it
 * decodes the whole segment once), read as parseCorrectionBlock reads it. A `%` left
 * after that decoding is a `%25` in the path, which no block holds.
 */
function blockOf(param: string | null): string {
  // The router hands over null for a segment whose percent-encoding it cannot decode.
  if (param === null) throw new CorrectionError("the block in the path is not valid percent-encoding");
  return parseCorrectionBlock(param.replaceAll("_", "/")).cidr;
}

function refused<T>(check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (error instanceof CorrectionError) throw new ApiError("invalid_request", error.message);
    throw error;
  }
}
