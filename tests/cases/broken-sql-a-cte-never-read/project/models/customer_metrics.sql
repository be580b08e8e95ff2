WITH unused AS (
    SELECT customer_id FROM source('orders') WHERE amount > 10
), o AS (
    SELECT customer_id, amount FROM source('orders')
)
SELECT
    customer_id,
    SUM(amount) AS total_spend
FROM o
GROUP BY customer_id
