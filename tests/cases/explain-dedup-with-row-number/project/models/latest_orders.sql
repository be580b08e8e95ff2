-- The latest copy of each order, with its row number selected: Flink makes the number
-- the constant 1 and deduplicates all the same.
SELECT order_id, customer_id, amount, placed_at, rn
FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY order_id ORDER BY placed_at DESC) AS rn
  FROM source('order_events')
)
WHERE rn = 1
