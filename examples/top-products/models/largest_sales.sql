-- The two largest sales of each category, by position; of two equal amounts, the lower
-- sale id ranks first.
SELECT category, position, sale_id, amount
FROM (
  SELECT category, sale_id, amount,
    ROW_NUMBER() OVER (PARTITION BY category ORDER BY amount DESC, sale_id) AS position
  FROM source('sales')
  WHERE category IS NOT NULL
)
WHERE position <= 2
