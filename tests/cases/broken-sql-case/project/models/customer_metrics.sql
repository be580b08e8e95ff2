SELECT
    customer_id,
    SUM(amount) AS total_spend
FROM source('orders')
WHERE CASE WHEN amount > 0 THEN TRUE ELSE FALSE END
GROUP BY customer_id
