-- The biggest single sale of each category so far; a tie keeps the earlier sale.
SELECT sale_id, category, product_id, amount
FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY category ORDER BY amount DESC) AS rn
  FROM source('sales')
  WHERE category IS NOT NULL
)
WHERE rn = 1
