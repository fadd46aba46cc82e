import { SEED_EXPLAINER, SEEDS } from '@/lib/seeds';

/** What a seed is, and the five write-ups by number. */
export function Seeds() {
  return (
    <section id="seeds" className="seeds" data-testid="seeds" tabIndex={-1}>
      <h2>Seeds</h2>
      <p>{SEED_EXPLAINER}</p>
      <dl className="seed-list">
        {SEEDS.map((s) => (
          <div key={s.id} id={`seed-${s.id}`} data-testid="seed-entry">
            <dt>
              Seed {s.id}: “{s.title}”
            </dt>
            <dd className="muted small">{s.what}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}
