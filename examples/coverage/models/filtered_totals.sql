-- Aggregate FILTER clauses and IF: per category, the lines of more than one item, the
-- revenue of flagged lines and the distinct notes of priced lines, each counting only the
-- rows its condition is true for (a null condition keeps none), and a label from IF.
SELECT category,
  COUNT(*) FILTER (WHERE qty > 1) AS big_lines,
  SUM(price) FILTER (WHERE flag) AS flagged_revenue,
  COUNT(DISTINCT note) FILTER (WHERE price IS NOT NULL) AS priced_notes,
  IF(COUNT(*) > 2, 'busy', 'quiet') AS activity
FROM source('events')
WHERE category IS NOT NULL
GROUP BY category
