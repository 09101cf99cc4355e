import type { ConsoleDb } from '../db.ts';
import { Html, badge, html, table, time } from '../html.ts';
import { amount, figure } from '../amount.ts';
import { NOT_APPLICABLE } from '../../reconciler/types.ts';

interface JournalRow {
  event_id: string;
  event_type: string;
  source: string;
  outcome: string;
  reason: string | null;
  changes: unknown;
  payload: Record<string, unknown>;
  occurred_at: string;
  recorded_at: string;
  partition: number;
  offset: string;
  aggregate_key: string;
}

interface ChainRow {
  role: string;
  txid: string;
  chain: string;
  currency: string;
  status: string;
  confirmations: number;
  required_confirmations: number;
  block: string | null;
  asset: string;
  transfers: { asset: string; recipient: string; amount: string }[];
  source: string;
  proven: boolean;
  deadline_passed: boolean;
  observed_at: string;
  detail: string | null;
  event_id: string;
}

export interface Check {
  name?: string;
  verdict?: string;
  expected?: unknown;
  actual?: unknown;
  delta?: unknown;
  tolerance?: unknown;
  detail?: unknown;
}

interface Finding {
  check?: string;
  outcome?: string;
  expected?: unknown;
  actual?: unknown;
  detail?: unknown;
}

const show = (v: unknown): string =>
  v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v);

/** A reconciliation check's row; a NOT_APPLICABLE one is neutral: every cell greyed, its badge grey. */
export function checkCells(k: Check): Html[] {
  const cells = [
    html`<code>${k.name}</code>`,
    badge(k.verdict),
    figure(show(k.expected)),
    figure(show(k.actual)),
    figure(show(k.delta)),
    html`${show(k.tolerance)}`,
    html`${show(k.detail)}`,
  ];
  return k.verdict === NOT_APPLICABLE ? cells.map((c) => html`<span class="na">${c}</span>`) : cells;
}

/** Everything the platform knows of one swap, read by (providerId, swapId). Undefined: no such swap. */
export async function swapLive(db: ConsoleDb, providerId: string, swapId: string): Promise<Html | undefined> {
  const [swap] = await db.query<Record<string, unknown>>(
    'select * from swaps where provider_id = $1 and swap_id = $2',
    [providerId, swapId],
  );
  if (!swap) return undefined;
  const [journal, recon, postings, chain] = await Promise.all([
    // The swap's own events, and those before it had an id: its request and its quote.
    db.query<JournalRow>(
      `select event_id, event_type, source, outcome, reason, changes, payload, occurred_at, recorded_at,
         partition, "offset"::text as "offset", aggregate_key
       from event_journal
       where provider_id = $1 and (swap_id = $2 or aggregate_key = any($3::text[]))
       order by recorded_at, partition, "offset"`,
      [
        providerId,
        swapId,
        [
          `request:${swap.request_id as string}`,
          ...(swap.quote_ref ? [`quote:${swap.quote_ref as string}`] : []),
        ],
      ],
    ),
    db.query<{ verdict: string; checks: Check[]; reconciled_at: string; based_on_event_id: string }>(
      `select r.verdict, r.checks, r.reconciled_at, r.based_on_event_id
       from reconciliations r join swaps s on s.provider_id = r.provider_id and s.swap_id = r.swap_id
       where s.provider_id = $1 and s.swap_id = $2`,
      [providerId, swapId],
    ),
    db.query<Record<string, string>>(
      `select entry_kind, entry_id, line, account, currency, amount::text as amount, effective_at, recorded_at, swap_version
       from ledger_postings where provider_id = $1 and swap_id = $2 order by swap_version, entry_id, line`,
      [providerId, swapId],
    ),
    // What the chain watcher saw of each reported transaction (the latest observation of each).
    db.query<ChainRow>(
      `select role, txid, chain, currency, status, confirmations, required_confirmations, block::text as block,
         asset, transfers, source, proven, deadline_passed, observed_at, detail, event_id
       from chain_observations where provider_id = $1 and swap_id = $2 order by role, observed_at`,
      [providerId, swapId],
    ),
  ]);
  const created = journal.find((j) => j.event_type === 'SwapCreated' && j.outcome === 'applied');
  const c = created?.payload as Record<string, unknown> | undefined;
  let decoded: unknown = null;
  try {
    decoded = c?.decodedPayloadJson ? JSON.parse(String(c.decodedPayloadJson)) : null;
  } catch {
    decoded = c?.decodedPayloadJson;
  }
  const findings = (Array.isArray(c?.findings) ? c.findings : []) as Finding[];
  const r = recon[0];
  // Amount and fees of the source currency, the rest in the destination's (the platform's currency ids).
  const from = (v: unknown) => amount(v as string | null, swap.payload_currency_from as string);
  const to = (v: unknown) => amount(v as string | null, swap.payload_currency_to as string);
  const fact = (label: string, value: unknown) =>
    html`<dt>${label}</dt>
      <dd data-field="${label}">${value instanceof Html ? value : show(value)}</dd>`;
  return html` <div class="grid">
      <section>
        <h2>State</h2>
        <dl class="facts">
          ${fact('status', badge(swap.status as string))} ${fact('provider status', swap.provider_status)}
          ${fact('status class', badge(swap.status_class as string | null))}
          ${fact('final', swap.final ? 'yes' : 'no')} ${fact('verdict', badge(r?.verdict))}
          ${fact('trade method', swap.trade_method)}
          ${fact('pair', `${swap.payload_currency_from as string} → ${swap.payload_currency_to as string} (partner ${swap.currency_from as string} → ${swap.currency_to as string})`)}
          ${fact('amount from', from(swap.amount_from))}
          ${fact('quoted amount to', to(swap.quoted_amount_to))} ${fact('amount to', to(swap.amount_to))}
          ${fact('provider fees', to(swap.provider_fees))} ${fact('referral fees', to(swap.referral_fees))}
          ${fact('payout network fees', to(swap.payout_network_fees))}
          ${fact('fees at creation', html`provider ${to(swap.created_provider_fees)} · referral ${to(swap.created_referral_fees)} · network ${to(swap.created_payout_network_fees)}`)}
          ${fact('slippage', swap.slippage)} ${fact('payin address', swap.payin_address)}
          ${fact('payout address', swap.payout_address)} ${fact('refund address', swap.refund_address)}
          ${fact('payin hash', swap.payin_transaction_id)} ${fact('payout hash', swap.payout_transaction_id)}
          ${fact('refund hash', swap.refund_transaction_id)}
          ${fact('created', time(swap.created_at as string))}
          ${fact('closed at', time(swap.closed_at as string | null))}
          ${fact('final at', time(swap.final_at as string | null))}
          ${fact('corrected', swap.corrected ? 'yes' : 'no')} ${fact('version', swap.version)}
        </dl>
      </section>
      <section>
        <h2>Signed payload</h2>
        <dl class="facts">
          ${fact('signature valid', badge(swap.signature_valid ? 'ok' : 'violation'))}
          ${fact('key', c?.keyId)} ${fact('signature field', c?.providerSigField)}
          ${fact('signed amount to provider', swap.signed_amount_to_provider)}
          ${fact('signed amount to wallet', swap.signed_amount_to_wallet)}
        </dl>
        <pre id="decoded-payload">${decoded === null ? 'not decoded' : JSON.stringify(decoded, null, 2)}</pre>
        <h2>Findings</h2>
        ${table(
          ['check', 'outcome', 'expected', 'actual', 'detail'],
          findings.map((f) => [
            html`<code>${f.check}</code>`,
            badge(f.outcome),
            show(f.expected),
            show(f.actual),
            show(f.detail),
          ]),
          'no findings recorded',
        )}
      </section>
    </div>
    <section>
      <h2>
        Reconciliation
        ${r ? html`${badge(r.verdict)} <span class="muted">at ${time(r.reconciled_at)}, based on event ${r.based_on_event_id}</span>` : ''}
      </h2>
      ${
        r
          ? table(
              ['check', 'verdict', 'expected', 'actual', 'delta', 'tolerance', 'detail'],
              r.checks.map(checkCells),
            )
          : html`<p class="muted">not reconciled yet</p>`
      }
    </section>
    <section>
      <h2>Chain evidence</h2>
      ${table(
        ['role', 'transaction', 'chain', 'seen', 'confirmations', 'block', 'transfers', 'proven', 'observed'],
        chain.map((o) => [
          o.role,
          html`<code>${o.txid}</code>`,
          `${o.chain} (${o.currency}, ${o.asset})`,
          html`${badge(o.status)}${o.deadline_passed ? html` <span class="muted">past the deadline</span>` : ''}`,
          `${o.confirmations}/${o.required_confirmations}`,
          o.block ?? '',
          html`${o.transfers.map((t) => html`<div><span class="num">${t.amount}</span> ${t.asset === 'native' ? '' : html`<code>${t.asset}</code> `}to <code>${t.recipient}</code></div>`)}`,
          o.proven ? 'yes' : 'no',
          html`${time(o.observed_at)}
            <span class="muted">${o.source}${o.detail ? ` · ${o.detail}` : ''}</span>`,
        ]),
        'not observed on a chain (no chain source for its currencies, no transaction reported, or not looked up yet)',
      )}
    </section>
    <section>
      <h2>Ledger postings</h2>
      ${table(
        ['kind', 'entry', 'line', 'account', 'currency', 'amount', 'effective', 'recorded'],
        postings.map((p) => [
          p.entry_kind,
          html`<code>${(p.entry_id ?? '').slice(0, 8)}…</code>`,
          p.line,
          p.account,
          p.currency,
          amount(p.amount, p.currency),
          time(p.effective_at),
          time(p.recorded_at),
        ]),
        'no postings (nothing moved, or not final yet)',
      )}
    </section>
    <section>
      <h2>Timeline <span class="muted">(${journal.length} journal rows)</span></h2>
      ${table(
        ['recorded', 'event', 'source', 'outcome', 'reason / changes', 'at', 'event'],
        journal.map((j) => [
          time(j.recorded_at),
          j.event_type,
          j.source,
          badge(j.outcome),
          html`${j.reason ?? ''}${j.changes ? html`<pre>${JSON.stringify(j.changes)}</pre>` : ''}`,
          html`<span class="muted">p${j.partition}:${j.offset}</span>`,
          html`<details id="ev-${j.event_id}">
            <summary>payload</summary>
            <pre>${JSON.stringify(j.payload, null, 2)}</pre>
          </details>`,
        ]),
      )}
    </section>`;
}
