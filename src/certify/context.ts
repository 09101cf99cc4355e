import type { StatusMapping } from '../swap/status.ts';
import type { PartnerKey } from '../payload/index.ts';
import type { Pair } from '../partner/types.ts';
import type { Exchange, PartnerHttp } from './http.ts';
import { Requirement, type Area } from './requirement.ts';

/** What certification knows of the provider: its registry entry (providers file or Postgres). */
export interface CertifyTarget {
  readonly providerId: string;
  readonly baseUrl: string;
  /** Auth headers to the partner: secrets, never printed. */
  readonly headers: Readonly<Record<string, string>>;
  readonly payloadKeys: readonly PartnerKey[];
  /** Partner currency id -> platform currency id. */
  readonly currencies: Readonly<Record<string, string>>;
  readonly statusMapping: StatusMapping;
  /** SHA-256 digests (hex) of the webhook keys not revoked. */
  readonly webhookKeyDigests: readonly string[];
  /** `limit` the platform sends on list pages, when the registry sets one. */
  readonly pageLimit?: number;
}

export interface CertifyOptions {
  /** Pairs to quote (and swap), partner ids `from/to`; default: the first usable pairs of /pairs. */
  readonly pairs?: readonly { readonly from: string; readonly to: string }[];
  readonly createSwaps: boolean;
  /** Listen for status webhooks on host:port (port 0: any). */
  readonly webhook?: { readonly host: string; readonly port: number };
  /** How long to wait for pushes after the swaps are created. Default 30 s. */
  readonly webhookWaitMs?: number;
  /** The platform's response-time limit. Default 5 s. */
  readonly timeLimitMs?: number;
  /** Shortest acceptable validity of a fixed quote. Default 60 s. */
  readonly minQuoteValidityMs?: number;
  /** `limit` sent on list pages. Default the registry's pageLimit, else 50. */
  readonly pageLimit?: number;
  /** Polls /status of each created swap until final or this long. Default 0: one poll. */
  readonly finalWaitMs?: number;
  /** Addresses sent in swap requests (payout on the destination chain, refund on the source one). */
  readonly payoutAddress?: string;
  readonly refundAddress?: string;
  /** Called with the webhook listener's URL once it listens. */
  readonly onListening?: (url: string) => void;
  readonly now?: () => Date;
}

/** A pair as usable for quotes: from the catalog, with its platform currency ids when mapped. */
export interface PairChoice {
  readonly pair: Pair;
  readonly platformFrom?: string;
  readonly platformTo?: string;
}

export interface QuoteSeen {
  readonly pair: PairChoice;
  readonly tradeMethod: 'fixed' | 'float';
  readonly request: Record<string, unknown>;
  readonly body: Record<string, unknown>;
  readonly exchange: Exchange;
}

export interface SwapSeen {
  readonly tradeMethod: 'fixed' | 'float';
  readonly swapId: string;
  readonly request: Record<string, unknown>;
  readonly body: Record<string, unknown>;
  readonly exchange: Exchange;
  readonly quote: QuoteSeen | undefined;
  /** The signature verifies and the payload matches: its figures can be held against the final ones. */
  signedOk?: boolean;
}

/** Shared state of one run: what each area found, for the areas after it. */
export class CertifyContext {
  readonly requirements: Requirement[] = [];
  currencies: Record<string, unknown>[] | undefined;
  pairs: Record<string, unknown>[] | undefined;
  readonly quotes: { fixed?: QuoteSeen; float?: QuoteSeen } = {};
  readonly swaps: SwapSeen[] = [];

  constructor(
    readonly target: CertifyTarget,
    readonly options: CertifyOptions,
    readonly http: PartnerHttp,
  ) {}

  requirement(id: string, area: Area, title: string): Requirement {
    const r = new Requirement(id, area, title);
    this.requirements.push(r);
    return r;
  }

  now(): Date {
    return this.options.now?.() ?? new Date();
  }
}
