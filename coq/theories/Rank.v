(** * Rank: full column rank over Q, and its certificate modulo [p].

    [full_column_rank c A]: the only [x] in [Q^c] with [A x = 0] is [0],
    i.e. the [c] columns of [A] are linearly independent over Q.
    [rank_at_least A r]: some [r] distinct columns of [A] are.

    Certificate ([check_inverse]): rows [I] of [A] mod [p] (a [c x c]
    matrix [A_I]) and an integer matrix [W] with [W A_I = 1] mod [p],
    computed in [Fpalg p].  Soundness ([fcr_of_check]): if [A x = 0] with
    [x] rational, clear denominators to an integer [y]; [W A_I y = 0] and
    [W A_I = 1 + (multiples of p)] give [p | y]; then [y / p] is a smaller
    integer solution, and by descent [y = 0].  [p] need not be prime. *)

From Coq Require Import List QArith ZArith Lia Uint63 Znumtheory Arith.
From Symattn Require Import Alg Network Modp.
Import ListNotations.
Local Open Scope Q_scope.

(** ** Definitions (over Q) *)

Definition QM := list (list Q).

Definition qmat_vec (A : QM) (x : list Q) : list Q := mat_vec Qalg A x.

Definition qzero (v : list Q) : Prop := Forall (fun q => q == 0) v.

Definition full_column_rank (c : nat) (A : QM) : Prop :=
  forall x : list Q, length x = c -> qzero (qmat_vec A x) -> qzero x.

(** Columns [S] of [A] (entries beyond a row's end are zero). *)
Definition qcols (A : QM) (S : list nat) : QM := map (fun row => map (fun j => nth j row 0) S) A.

Definition rank_at_least (A : QM) (r : nat) : Prop :=
  exists S : list nat, length S = r /\ NoDup S /\ full_column_rank r (qcols A S).

(** A square matrix with trivial kernel. *)
Definition nonsingular (A : QM) : Prop :=
  Forall (fun row => length row = length A) A /\ full_column_rank (length A) A.

(** ** Finite sums *)

Fixpoint sumq (n : nat) (f : nat -> Q) : Q :=
  match n with O => 0 | S n' => sumq n' f + f n' end.

Lemma sumq_ext n f g : (forall j, (j < n)%nat -> f j == g j) -> sumq n f == sumq n g.
Proof.
  induction n; intros H; simpl; [reflexivity|].
  rewrite IHn, H; [reflexivity|lia|intros; apply H; lia].
Qed.

Lemma sumq_zero n f : (forall j, (j < n)%nat -> f j == 0) -> sumq n f == 0.
Proof.
  intros H; rewrite (sumq_ext n f (fun _ => 0)) by auto.
  clear; induction n; simpl; [reflexivity|rewrite IHn; ring].
Qed.

Lemma sumq_add n f g : sumq n (fun j => f j + g j) == sumq n f + sumq n g.
Proof. induction n; simpl; [ring|rewrite IHn; ring]. Qed.

Lemma sumq_scale n c f : sumq n (fun j => c * f j) == c * sumq n f.
Proof. induction n; simpl; [ring|rewrite IHn; ring]. Qed.

Lemma sumq_swap n m f : sumq n (fun i => sumq m (fun j => f i j)) == sumq m (fun j => sumq n (fun i => f i j)).
Proof.
  induction n; simpl.
  - symmetry; apply sumq_zero; reflexivity.
  - rewrite IHn, <- sumq_add; reflexivity.
Qed.

Lemma sumq_shift n f : sumq (S n) f == f O + sumq n (fun j => f (S j)).
Proof. induction n; simpl in *; [ring|rewrite IHn; ring]. Qed.

Lemma sumq_delta n k f : (k < n)%nat -> sumq n (fun j => (if Nat.eqb k j then 1 else 0) * f j) == f k.
Proof.
  induction n; intros H; [lia|simpl].
  destruct (Nat.eqb_spec k n).
  - subst; rewrite sumq_zero; [ring|].
    intros j Hj; destruct (Nat.eqb_spec n j); [lia|ring].
  - rewrite IHn by lia; ring.
Qed.

(** ** From lists to sums *)

Lemma fold_plus l a : fold_left Qplus' l a == a + sumq (length l) (fun j => nth j l 0).
Proof.
  revert a; induction l; intros a0; cbn [fold_left length]; [simpl; ring|].
  rewrite IHl, sumq_shift, Qplus'_correct; simpl; ring.
Qed.

Lemma nth_zipw {X Y Z : Type} (f : X -> Y -> Z) l l' j dx dy dz :
  (j < length l)%nat -> (j < length l')%nat -> nth j (zipw f l l') dz = f (nth j l dx) (nth j l' dy).
Proof.
  revert l' j; induction l; intros l' j H H'; [simpl in H; lia|].
  destruct l'; [simpl in H'; lia|]. destruct j; simpl; auto.
  apply IHl; simpl in *; lia.
Qed.

Lemma length_zipw {X Y Z : Type} (f : X -> Y -> Z) l l' : length (zipw f l l') = Nat.min (length l) (length l').
Proof. revert l'; induction l; intros [|y l']; simpl; auto. Qed.

(** [dot row x] is [sum_j row_j x_j] over the common length. *)
Lemma dot_sumq row x n : length x = n -> (length row <= n)%nat ->
  dot Qalg row x == sumq n (fun j => nth j row 0 * nth j x 0).
Proof.
  intros Hx Hr; unfold dot, vsum; simpl; change (car Qalg) with Q in *.
  rewrite fold_plus, length_zipw.
  rewrite Nat.min_l by lia.
  rewrite Qplus_0_l.
  assert (E : forall k, (length row <= k <= n)%nat ->
            sumq k (fun j => nth j row 0 * nth j x 0) == sumq (length row) (fun j => nth j row 0 * nth j x 0)).
  { intros k Hk; induction k.
    - replace (length row) with O by lia; reflexivity.
    - destruct (Nat.eq_dec (length row) (S k)) as [E|E]; [rewrite E; reflexivity|].
      simpl; rewrite IHk by lia. rewrite (nth_overflow row) by lia; rewrite Qmult_0_l, Qplus_0_r; reflexivity. }
  rewrite (E n) by lia.
  apply sumq_ext; intros j Hj.
  rewrite (nth_zipw _ _ _ _ 0 0) by lia. simpl. rewrite Qmult'_correct; reflexivity.
Qed.

Lemma qzero_nth v : qzero v <-> forall k, (k < length v)%nat -> nth k v 0 == 0.
Proof.
  unfold qzero; rewrite Forall_forall; split.
  - intros H k Hk; apply H, nth_In; auto.
  - intros H q Hq; apply In_nth with (d := 0) in Hq; destruct Hq as [k [Hk <-]]; auto.
Qed.

Lemma nth_qmat_vec A x k : (k < length A)%nat -> nth k (qmat_vec A x) 0 = dot Qalg (nth k A []) x.
Proof.
  intros H; unfold qmat_vec, mat_vec.
  rewrite (nth_indep _ _ (dot Qalg [] x)) by (rewrite map_length; auto).
  exact (map_nth (fun row => dot Qalg row x) A [] k).
Qed.

(** ** The certificate *)

Definition fcol (A : list (list fp)) (j : nat) : list fp := map (fun row => nth j row (0%uint63, true)) A.

Definition check_row (p : int) (AI : list (list fp)) (c k : nat) (w : list Z) : bool :=
  forallb (fun j =>
      let g := dot (Fpalg p) (map (fun z => fofQ p (inject_Z z)) w) (fcol AI j) in
      andb (snd g) (to_Z (fst g) =? (if Nat.eqb k j then 1 else 0))%Z)
    (seq 0 c).

(** [W (rows I of Ab) = 1] mod [p], every flag true, all sizes [c]. *)
Definition check_inverse (p : int) (Ab : list (list fp)) (I : list nat) (W : list (list Z)) (c : nat) : bool :=
  let AI := map (fun i => nth i Ab []) I in
  andb (andb (Nat.eqb (length I) c) (Nat.eqb (length W) c))
   (andb (andb (forallb (fun i => Nat.ltb i (length Ab)) I)
               (andb (forallb (fun r => Nat.eqb (length r) c) W) (forallb (fun r => Nat.eqb (length r) c) AI)))
         (forallb (fun kw => check_row p AI c (fst kw) (snd kw)) (combine (seq 0 c) W))).

Section Soundness.
Variable p : int.
Hypothesis Hp : (1 < to_Z p < 2147483648)%Z.
Let P := to_Z p.

Lemma modrep_int_cong z r : modrep P (inject_Z z) r -> cong P z r.
Proof.
  intros [a [b [bi [Hb [Hq [Hbi Hr]]]]]].
  assert (E : (z * b = a)%Z).
  { apply inject_Z_injective. rewrite inject_Z_mult, Hq. field. apply inject_Z_neq0; auto. }
  rewrite Hr, <- E. transitivity (z * (b * bi))%Z; [|cong_ring].
  rewrite Hbi; cong_ring.
Qed.

(** A square block: [AI] ([c x c], entries [a l j]) and the integer matrix [w k l]. *)
Variables (c : nat) (a : nat -> nat -> Q) (w : nat -> nat -> Z).
Let G k j := sumq c (fun l => inject_Z (w k l) * a l j).
Hypothesis HG : forall k j, (k < c)%nat -> (j < c)%nat -> modrep P (G k j) (if Nat.eqb k j then 1 else 0)%Z.

Definition kills (y : nat -> Z) : Prop :=
  forall l, (l < c)%nat -> sumq c (fun j => a l j * inject_Z (y j)) == 0.

Lemma modrep_sumq n f r : (forall j, (j < n)%nat -> modrep P (f j) (r j)) ->
  modrep P (sumq n f) (fold_left (fun acc j => acc + r j)%Z (seq 0 n) 0%Z).
Proof.
  induction n; intros H; [simpl; apply (modrep_int P 0)|].
  cbn [sumq]; rewrite seq_S, fold_left_app; cbn [fold_left plus].
  apply modrep_add; [apply IHn; intros; apply H; lia|apply H; lia].
Qed.

Lemma offdiag k j (z : Z) : (k < c)%nat -> (j < c)%nat ->
  modrep P ((G k j - (if Nat.eqb k j then 1 else 0)) * inject_Z z) 0%Z.
Proof.
  intros Hk Hj.
  set (d := if Nat.eqb k j then 1%Z else 0%Z).
  assert (Ed : inject_Z d == (if Nat.eqb k j then 1 else 0)) by (unfold d; destruct (Nat.eqb k j); reflexivity).
  assert (M1 : modrep P (G k j + - inject_Z d) (d + - d)) by (apply modrep_add; [apply HG; auto|apply modrep_opp, modrep_int]).
  assert (M2 : modrep P ((G k j + - inject_Z d) * inject_Z z) ((d + - d) * z)) by (apply modrep_mul; auto; apply modrep_int).
  eapply modrep_z; [|eapply modrep_compat; [|exact M2]]; [cong_ring|].
  rewrite Ed; unfold Qminus; reflexivity.
Qed.

Lemma step_divisible y : kills y -> forall k, (k < c)%nat -> cong P (y k) 0.
Proof.
  intros Hy k Hk.
  assert (E1 : sumq c (fun j => G k j * inject_Z (y j)) == 0).
  { transitivity (sumq c (fun j => sumq c (fun l => inject_Z (w k l) * (a l j * inject_Z (y j))))).
    { apply sumq_ext; intros j Hj. unfold G. rewrite Qmult_comm, <- sumq_scale.
      apply sumq_ext; intros; ring. }
    rewrite sumq_swap. apply sumq_zero; intros l Hl.
    rewrite sumq_scale, (Hy l Hl); ring. }
  assert (E2 : sumq c (fun j => G k j * inject_Z (y j)) ==
               inject_Z (y k) + sumq c (fun j => (G k j - (if Nat.eqb k j then 1 else 0)) * inject_Z (y j))).
  { rewrite <- (sumq_delta c k (fun j => inject_Z (y j))) at 1 by auto.
    rewrite <- sumq_add; apply sumq_ext; intros; ring. }
  assert (M : modrep P (sumq c (fun j => (G k j - (if Nat.eqb k j then 1 else 0)) * inject_Z (y j)))
                       (fold_left (fun acc j => acc + 0)%Z (seq 0 c) 0%Z)).
  { apply modrep_sumq; intros j Hj. apply offdiag; auto. }
  assert (Z0 : forall n, fold_left (fun acc j => acc + 0)%Z (seq 0 n) 0%Z = 0%Z).
  { intros n; induction n; auto; rewrite seq_S, fold_left_app; simpl; lia. }
  rewrite Z0 in M.
  apply modrep_int_cong.
  eapply modrep_compat; [|eapply modrep_z; [|apply modrep_opp, M]]; [|cong_ring].
  set (S := sumq c (fun j => (G k j - (if Nat.eqb k j then 1 else 0)) * inject_Z (y j))) in *.
  assert (E3 : inject_Z (y k) + S == 0) by (rewrite <- E2; exact E1).
  transitivity (- (inject_Z (y k) + S) + inject_Z (y k)); [ring|rewrite E3; ring].
Qed.

Fixpoint mu (n : nat) (y : nat -> Z) : nat :=
  match n with O => O | S n' => (mu n' y + Z.abs_nat (y n'))%nat end.

Lemma mu_zero n y : mu n y = O -> forall k, (k < n)%nat -> y k = 0%Z.
Proof.
  induction n; simpl; intros H k Hk; [lia|].
  destruct (Nat.eq_dec k n); [subst; lia|apply IHn; lia].
Qed.

Lemma mu_div n y y' : (forall k, (k < n)%nat -> y k = P * y' k)%Z -> mu n y = (Z.to_nat P * mu n y')%nat.
Proof.
  induction n; intros H; simpl; [lia|].
  rewrite IHn by (intros; apply H; lia). rewrite H by lia.
  assert (EP : Z.abs_nat P = Z.to_nat P) by (apply Zabs2Nat.abs_nat_nonneg; lia).
  rewrite Zabs2Nat.inj_mul, EP; ring.
Qed.

Lemma descent : forall n y, (mu c y <= n)%nat -> kills y -> forall k, (k < c)%nat -> y k = 0%Z.
Proof.
  induction n; intros y Hmu Hy.
  - apply mu_zero; lia.
  - set (y' := fun k => (y k / P)%Z).
    assert (Hdiv : forall k, (k < c)%nat -> (y k = P * y' k)%Z).
    { intros k Hk. pose proof (step_divisible y Hy k Hk) as [q Hq].
      unfold y'. rewrite Z.sub_0_r in Hq. rewrite Hq, Z.div_mul by lia. lia. }
    assert (Hy' : kills y').
    { intros l Hl. apply (Qmult_inj_l _ _ (inject_Z P)); [apply inject_Z_neq0; lia|].
      rewrite <- sumq_scale, Qmult_0_r, <- (Hy l Hl). apply sumq_ext; intros j Hj.
      rewrite Hdiv, inject_Z_mult by auto; ring. }
    destruct (Nat.eq_dec (mu c y) O) as [E|E]; [apply mu_zero; auto|].
    assert (Hmu' : (mu c y' <= n)%nat).
    { rewrite (mu_div c y y' Hdiv) in Hmu, E. assert (2 <= Z.to_nat P)%nat by lia. nia. }
    intros k Hk. rewrite Hdiv, (IHn y' Hmu' Hy' k Hk) by auto. lia.
Qed.

(** Clearing denominators. *)
Fixpoint prodden (n : nat) (x : nat -> Q) : Z :=
  match n with O => 1%Z | S n' => (prodden n' x * Zpos (Qden (x n')))%Z end.

Lemma prodden_pos n x : (0 < prodden n x)%Z.
Proof. induction n; simpl; lia. Qed.

Lemma prodden_div n x j : (j < n)%nat -> (Zpos (Qden (x j)) | prodden n x)%Z.
Proof.
  induction n; intros H; [lia|simpl].
  destruct (Nat.eq_dec j n); [subst; apply Z.divide_factor_r|].
  apply Z.divide_mul_l, IHn; lia.
Qed.

Lemma square_fcr (x : nat -> Q) :
  (forall l, (l < c)%nat -> sumq c (fun j => a l j * x j) == 0) -> forall k, (k < c)%nat -> x k == 0.
Proof.
  intros Hx.
  set (D := prodden c x).
  set (y := fun j => (Qnum (x j) * (D / Zpos (Qden (x j))))%Z).
  assert (Ey : forall j, (j < c)%nat -> inject_Z (y j) == inject_Z D * x j).
  { intros j Hj. destruct (prodden_div c x j Hj) as [q Hq]. unfold y; fold D in Hq.
    rewrite Hq, Z.div_mul by lia.
    destruct (x j) as [nn dd]; unfold Qeq; simpl; ring. }
  assert (Hy : kills y).
  { intros l Hl. rewrite (sumq_ext c _ (fun j => inject_Z D * (a l j * x j)))
      by (intros; rewrite Ey by auto; ring).
    rewrite sumq_scale, Hx by auto; ring. }
  intros k Hk.
  pose proof (descent _ y (le_n _) Hy k Hk) as Z0.
  pose proof (Ey k Hk) as E. rewrite Z0 in E.
  apply (Qmult_inj_l _ _ (inject_Z D)); [apply inject_Z_neq0; pose proof (prodden_pos c x); lia|].
  rewrite <- E; simpl; ring.
Qed.

End Soundness.

(** ** From the check to full column rank *)

Lemma forallb_seq_spec f n : forallb f (seq 0 n) = true -> forall j, (j < n)%nat -> f j = true.
Proof.
  intros H j Hj; rewrite forallb_forall in H; apply H, in_seq; lia.
Qed.

Lemma nth_combine_seq {X : Type} (W : list X) k d :
  (k < length W)%nat -> nth k (combine (seq 0 (length W)) W) (O, d) = (k, nth k W d).
Proof.
  intros H. rewrite combine_nth by (rewrite seq_length; auto).
  rewrite seq_nth by auto; reflexivity.
Qed.

Theorem fcr_of_check (p : int) (A : QM) (Ab : list (list fp)) (I : list nat) (W : list (list Z)) (c : nat) :
  (1 < to_Z p < 2147483648)%Z ->
  Forall2 (Forall2 (Rp p)) A Ab ->
  check_inverse p Ab I W c = true ->
  full_column_rank c A.
Proof.
  intros Hp HA Hc.
  pose proof (Fp_rel p Hp) as HR.
  unfold check_inverse in Hc.
  apply andb_prop in Hc as [Hc1 Hc2].
  apply andb_prop in Hc1 as [HI HWl]. apply Nat.eqb_eq in HI, HWl.
  apply andb_prop in Hc2 as [Hc2 HW]. apply andb_prop in Hc2 as [HIb Hc2].
  apply andb_prop in Hc2 as [HWr HAr].
  rewrite forallb_forall in HIb, HWr, HAr, HW.
  set (AI := map (fun i => nth i A []) I).
  set (AIb := map (fun i => nth i Ab []) I) in *.
  assert (HAI : Forall2 (Forall2 (Rp p)) AI AIb).
  { unfold AI, AIb; eapply Forall2_map with (S := eq); [clear; induction I; constructor; auto|].
    intros i i' ->; apply Forall2_nth; auto; constructor. }
  assert (Hrow : forall l, (l < c)%nat -> length (nth l AI []) = c).
  { intros l Hl. rewrite (Forall2_length _ _ _ _ _ (Forall2_nth _ _ _ _ _ [] [] l HAI (Forall2_nil _))).
    apply Nat.eqb_eq, HAr, nth_In; unfold AIb; rewrite map_length; lia. }
  set (a := fun l j => nth j (nth l AI []) 0).
  set (w := fun k l => nth l (nth k W []) 0%Z).
  assert (HG : forall k j, (k < c)%nat -> (j < c)%nat ->
            modrep (to_Z p) (sumq c (fun l => inject_Z (w k l) * a l j)) (if Nat.eqb k j then 1 else 0)%Z).
  { intros k j Hk Hj.
    assert (Hk' : In (k, nth k W []) (combine (seq 0 c) W)).
    { rewrite <- HWl at 1. rewrite <- (nth_combine_seq W k []) by lia. apply nth_In.
      rewrite combine_length, seq_length; lia. }
    pose proof (HW _ Hk') as Hrowk; simpl in Hrowk. unfold check_row in Hrowk.
    pose proof (forallb_seq_spec _ _ Hrowk j Hj) as Hg; simpl in Hg.
    apply andb_prop in Hg as [Hflag Hval]. apply Z.eqb_eq in Hval.
    set (v := map (fun z => fofQ p (inject_Z z)) (nth k W [])) in *.
    set (col := fcol AIb j) in *.
    assert (Rg : Rp p (dot Qalg (map inject_Z (nth k W [])) (map (fun row => nth j row 0) AI)) (dot (Fpalg p) v col)).
    { apply (dot_rel _ _ _ HR).
      - unfold v; eapply Forall2_map with (S := eq); [clear; induction (nth k W []); constructor; auto|].
        intros z z' ->; apply (rel_ofQ _ _ _ HR).
      - unfold col, fcol; eapply Forall2_map; eauto; intros r r' Hr.
        apply Forall2_nth; auto; apply (rel_zero _ _ _ HR). }
    destruct (Rg Hflag) as [_ Mg]. rewrite Hval in Mg.
    eapply modrep_compat; [|exact Mg].
    assert (HWk : length (nth k W []) = c) by (apply Nat.eqb_eq, HWr, nth_In; lia).
    etransitivity; [apply (dot_sumq _ _ c); [rewrite map_length; unfold AI; rewrite map_length; lia|rewrite map_length; lia]|].
    apply sumq_ext; intros l Hl.
    unfold w, a.
    change 0 with (inject_Z 0%Z) at 1. rewrite map_nth.
    rewrite (nth_indep _ _ (nth j [] 0)) by (rewrite map_length; unfold AI; rewrite map_length; lia).
    rewrite (map_nth (fun row => nth j row 0) AI [] l). reflexivity. }
  assert (EAI : forall l, (l < c)%nat -> nth l AI [] = nth (nth l I O) A []).
  { intros l Hl; unfold AI.
    rewrite (nth_indep (map (fun i => nth i A []) I) [] (nth O A [])) by (rewrite map_length; lia).
    apply (map_nth (fun i => nth i A []) I O l). }
  intros x Hx Hz.
  assert (Hsq : forall l, (l < c)%nat -> sumq c (fun j => a l j * nth j x 0) == 0).
  { intros l Hl.
    assert (HIl : (nth l I O < length A)%nat).
    { rewrite (Forall2_length _ _ _ _ _ HA). apply Nat.ltb_lt, HIb, nth_In; lia. }
    apply qzero_nth with (k := nth l I O) in Hz; [|unfold qmat_vec, mat_vec; rewrite map_length; auto].
    rewrite nth_qmat_vec in Hz by auto.
    pose proof (Hrow l Hl) as Hl'; rewrite EAI in Hl' by auto.
    rewrite <- Hz; symmetry.
    etransitivity; [apply (dot_sumq _ _ c); change (car Qalg) with Q in *; lia|].
    apply sumq_ext; intros j Hj; unfold a; rewrite EAI by auto; reflexivity. }
  apply qzero_nth; intros k Hk.
  apply (square_fcr p Hp c a w HG (fun j => nth j x 0) Hsq k); lia.
Qed.

(** Full rank of selected columns gives a rank lower bound. *)
Theorem rank_of_check (p : int) (A : QM) (S : list nat) (Ab : list (list fp)) (I : list nat) (W : list (list Z)) :
  (1 < to_Z p < 2147483648)%Z ->
  Forall2 (Forall2 (Rp p)) (qcols A S) Ab ->
  NoDup S ->
  check_inverse p Ab I W (length S) = true ->
  rank_at_least A (length S).
Proof.
  intros Hp HA HS Hc; exists S; split; [reflexivity|split; auto].
  eapply fcr_of_check; eauto.
Qed.
