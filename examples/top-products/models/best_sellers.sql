-- The two products sold most often in each category, by position; of two products sold
-- as often, the one that got there first ranks first.
SELECT category, position, product_id, sales
FROM (
  SELECT category, product_id, sales,
    ROW_NUMBER() OVER (PARTITION BY category ORDER BY sales DESC) AS position
  FROM ref('product_revenue')
)
WHERE position <= 2
