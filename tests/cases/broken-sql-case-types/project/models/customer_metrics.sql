SELECT
    customer_id,
    SUM(amount) AS total_spend
FROM source('orders')
WHERE CASE WHEN amount > 0 THEN 1 ELSE 'none' END > 0
GROUP BY customer_id
