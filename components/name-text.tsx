/**
 * A dotted name (orders.created.eu-west) that wraps at its separators, not mid-word: a break
 * opportunity after each `.`, `-`, `_` and `/`; a part longer than the line still wraps (the cell's
 * `break-words`).
 */
export function NameText({ text }: { text: string }) {
  const parts = text.split(/(?<=[./_-])/);
  return (
    <>
      {parts.map((p, i) => (
        <span key={i}>
          {p}
          {i < parts.length - 1 ? <wbr /> : null}
        </span>
      ))}
    </>
  );
}
