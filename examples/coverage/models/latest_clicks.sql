-- Deduplication keeping the last row by the time attribute: each visitor's latest click.
-- A click with a later or the same time replaces the kept one; an earlier one is ignored.
SELECT visitor, page, clicked_at
FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY visitor ORDER BY clicked_at DESC) AS rn
  FROM source('clicks')
  WHERE visitor IS NOT NULL
)
WHERE rn = 1
